// How a payment is made: the stored payment type and the buyer's method (docs/checkout.md), one
// list each for the entity, the request schemas and the API description.

export const PAYMENT_TYPES = ['DIRECT', 'SMART_CONTRACT'] as const;
export type PaymentType = (typeof PAYMENT_TYPES)[number];
export const PAYMENT_METHODS = ['direct', 'web3', 'service_wallet'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];
