import { AuditEntrySchema } from './audit-entry.entity.ts';
import { DashboardGrantSchema } from './dashboard-grant.entity.ts';
import { DashboardSessionSchema } from './dashboard-session.entity.ts';
import { DashboardUserSchema } from './dashboard-user.entity.ts';
import { RecoveryCodeSchema } from './recovery-code.entity.ts';
import { SigninThrottleSchema } from './signin-throttle.entity.ts';
import { WebauthnChallengeSchema } from './webauthn-challenge.entity.ts';
import { WebauthnCredentialSchema } from './webauthn-credential.entity.ts';
import { IdempotencyRecordSchema } from './idempotency-record.entity.ts';
import { IndexedBlockSchema } from './indexed-block.entity.ts';
import { IndexerCursorSchema } from './indexer-cursor.entity.ts';
import { InvoiceSchema } from './invoice.entity.ts';
import { MerchantPointSchema } from './merchant-point.entity.ts';
import { ObservedTransferSchema } from './observed-transfer.entity.ts';
import { PaymentSchema } from './payment.entity.ts';
import { ReferenceCounterSchema } from './reference-counter.entity.ts';
import { RefundSchema } from './refund.entity.ts';
import { SweepPlanSchema } from './sweep-plan.entity.ts';
import { SweepTxSchema } from './sweep-tx.entity.ts';
import { WalletAddressSchema } from './wallet-address.entity.ts';
import { WebhookAttemptSchema } from './webhook-attempt.entity.ts';
import { WebhookDeliverySchema } from './webhook-delivery.entity.ts';
import { WebhookEventSchema } from './webhook-event.entity.ts';

/** The entity list handed to MikroORM (explicit, so no folder scanning at start-up). */
export const ENTITIES = [
  MerchantPointSchema,
  InvoiceSchema,
  PaymentSchema,
  WalletAddressSchema,
  IdempotencyRecordSchema,
  WebhookEventSchema,
  WebhookDeliverySchema,
  WebhookAttemptSchema,
  IndexerCursorSchema,
  IndexedBlockSchema,
  ObservedTransferSchema,
  ReferenceCounterSchema,
  SweepPlanSchema,
  SweepTxSchema,
  RefundSchema,
  DashboardUserSchema,
  DashboardGrantSchema,
  DashboardSessionSchema,
  WebauthnCredentialSchema,
  WebauthnChallengeSchema,
  RecoveryCodeSchema,
  AuditEntrySchema,
  SigninThrottleSchema,
];
