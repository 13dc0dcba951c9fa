import { Migration } from '@mikro-orm/migrations';

export class Migration20261121053113_initial extends Migration {
  async up() {
    this.addSql(`create table "idempotency_record" ("id" varchar(32) not null, "merchant_id" varchar(32) not null, "key" varchar(255) not null, "fingerprint" varchar(64) not null, "state" varchar(16) not null, "status_code" int null, "response_body" text null, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "idempotency_record_expires_at_index" on "idempotency_record" ("expires_at");`);
    this.addSql(`alter table "idempotency_record" add constraint "idempotency_record_merchant_id_key_unique" unique ("merchant_id", "key");`);

    this.addSql(`create table "indexed_block" ("id" varchar(32) not null, "chain" varchar(32) not null, "network" varchar(32) not null, "number" bigint not null, "hash" varchar(128) not null, "parent_hash" varchar(128) not null, primary key ("id"));`);
    this.addSql(`alter table "indexed_block" add constraint "indexed_block_chain_network_number_unique" unique ("chain", "network", "number");`);

    this.addSql(`create table "indexer_cursor" ("id" varchar(32) not null, "chain" varchar(32) not null, "network" varchar(32) not null, "block_number" varchar(32) not null, "block_hash" varchar(128) not null, "lease_owner" varchar(64) null, "lease_until" timestamptz(3) null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "indexer_cursor" add constraint "indexer_cursor_chain_network_unique" unique ("chain", "network");`);

    this.addSql(`create table "merchant_point" ("id" varchar(32) not null, "name" varchar(255) not null, "api_key" varchar(64) not null, "api_secret_enc" text not null, "webhook_url" varchar(2048) null, "active" boolean not null default true, "accepted_chains" jsonb null, "accepted_currencies" jsonb null, "webhook_events" jsonb null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "merchant_point" add constraint "merchant_point_api_key_unique" unique ("api_key");`);

    this.addSql(`create table "invoice" ("id" varchar(32) not null, "reference_id" varchar(32) not null, "merchant_id" varchar(32) not null, "order_id" varchar(255) not null, "description" varchar(500) not null default '', "amount" varchar(80) not null, "currency" varchar(10) not null, "status" varchar(24) not null default 'DRAFT', "customer_email" varchar(320) null, "customer_name" varchar(255) null, "customer_metadata" jsonb not null, "metadata" jsonb not null, "return_url" varchar(2048) null, "cancel_url" varchar(2048) null, "expires_at" timestamptz(3) not null, "viewed_at" timestamptz(3) null, "paid_at" timestamptz(3) null, "cancelled_at" timestamptz(3) null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "invoice" add constraint "invoice_reference_id_unique" unique ("reference_id");`);
    this.addSql(`create index "invoice_merchant_id_order_id_index" on "invoice" ("merchant_id", "order_id");`);
    this.addSql(`create index "invoice_status_expires_at_index" on "invoice" ("status", "expires_at");`);

    this.addSql(`create table "observed_transfer" ("id" varchar(32) not null, "chain" varchar(32) not null, "network" varchar(32) not null, "tx_hash" varchar(128) not null, "log_index" int not null, "block_number" varchar(32) not null, "block_hash" varchar(128) not null, "from_address" varchar(128) null, "to_address" varchar(128) not null, "token_address" varchar(128) null, "symbol" varchar(16) null, "amount" varchar(80) not null, "payment_id" varchar(32) null, "status" varchar(16) not null, "note" varchar(255) null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "observed_transfer_payment_id_index" on "observed_transfer" ("payment_id");`);
    this.addSql(`create index "observed_transfer_chain_network_block_number_index" on "observed_transfer" ("chain", "network", "block_number");`);
    this.addSql(`create index "observed_transfer_status_index" on "observed_transfer" ("status");`);
    this.addSql(`alter table "observed_transfer" add constraint "observed_transfer_chain_network_tx_hash_log_index_unique" unique ("chain", "network", "tx_hash", "log_index");`);

    this.addSql(`create table "payment" ("id" varchar(32) not null, "reference_id" varchar(32) not null, "invoice_id" varchar(32) not null, "merchant_id" varchar(32) not null, "status" varchar(24) not null default 'PENDING', "payment_type" varchar(24) not null default 'DIRECT', "method" varchar(24) not null default 'direct', "blockchain" varchar(32) not null, "network" varchar(32) not null, "is_testnet" boolean not null default false, "crypto_currency" varchar(16) not null, "decimals" int not null, "token_address" varchar(128) null, "amount" varchar(80) not null, "expected_amount" varchar(80) not null, "received_amount" varchar(80) not null default '0', "address" varchar(128) not null, "confirmations" int not null default 0, "required_confirmations" int not null, "transaction_hash" varchar(128) null, "block_number" varchar(32) null, "contract_address" varchar(128) null, "external_id" varchar(66) null, "external_id_uuid" varchar(36) null, "metadata" jsonb not null, "expires_at" timestamptz(3) not null, "completed_at" timestamptz(3) null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "payment" add constraint "payment_reference_id_unique" unique ("reference_id");`);
    this.addSql(`alter table "payment" add constraint "payment_external_id_unique" unique ("external_id");`);
    this.addSql(`create index "payment_merchant_id_created_at_index" on "payment" ("merchant_id", "created_at");`);
    this.addSql(`create index "payment_invoice_id_created_at_index" on "payment" ("invoice_id", "created_at");`);
    this.addSql(`create index "payment_blockchain_is_testnet_status_index" on "payment" ("blockchain", "is_testnet", "status");`);
    this.addSql(`create index "payment_status_expires_at_index" on "payment" ("status", "expires_at");`);

    this.addSql(`create table "reference_counter" ("id" varchar(16) not null, "value" int not null, primary key ("id"));`);

    this.addSql(`create table "wallet_address" ("id" varchar(32) not null, "chain" varchar(32) not null, "is_testnet" boolean not null default false, "address" varchar(128) not null, "status" varchar(16) not null default 'FREE', "derivation_index" int null, "source" varchar(64) not null, "payment_id" varchar(32) null, "leased_at" timestamptz(3) null, "created_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "wallet_address" add constraint "wallet_address_payment_id_unique" unique ("payment_id");`);
    this.addSql(`create index "wallet_address_chain_is_testnet_status_derivation_index_index" on "wallet_address" ("chain", "is_testnet", "status", "derivation_index");`);
    this.addSql(`alter table "wallet_address" add constraint "wallet_address_chain_is_testnet_address_unique" unique ("chain", "is_testnet", "address");`);

    this.addSql(`create table "webhook_event" ("id" varchar(32) not null, "merchant_id" varchar(32) not null, "type" varchar(64) not null, "payload" text not null, "payment_id" varchar(32) null, "invoice_id" varchar(32) null, "created_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "webhook_event_payment_id_index" on "webhook_event" ("payment_id");`);
    this.addSql(`create index "webhook_event_invoice_id_index" on "webhook_event" ("invoice_id");`);
    this.addSql(`create index "webhook_event_merchant_id_created_at_index" on "webhook_event" ("merchant_id", "created_at");`);

    this.addSql(`create table "webhook_delivery" ("id" varchar(32) not null, "event_id" varchar(32) not null, "replay_of" varchar(32) null, "state" varchar(16) not null default 'PENDING', "attempt_count" int not null default 0, "next_attempt_at" timestamptz(3) null, "lease_owner" varchar(64) null, "lease_until" timestamptz(3) null, "last_status_code" int null, "last_error" text null, "delivered_at" timestamptz(3) null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "webhook_delivery_state_next_attempt_at_index" on "webhook_delivery" ("state", "next_attempt_at");`);

    this.addSql(`create table "webhook_attempt" ("id" varchar(32) not null, "delivery_id" varchar(32) not null, "attempted_at" timestamptz(3) not null, "status_code" int null, "duration_ms" int not null, "response_body" text null, "error" text null, primary key ("id"));`);

    this.addSql(`alter table "invoice" add constraint "invoice_merchant_id_foreign" foreign key ("merchant_id") references "merchant_point" ("id");`);

    this.addSql(`alter table "payment" add constraint "payment_invoice_id_foreign" foreign key ("invoice_id") references "invoice" ("id");`);
    this.addSql(`alter table "payment" add constraint "payment_merchant_id_foreign" foreign key ("merchant_id") references "merchant_point" ("id");`);

    this.addSql(`alter table "webhook_event" add constraint "webhook_event_merchant_id_foreign" foreign key ("merchant_id") references "merchant_point" ("id");`);

    this.addSql(`alter table "webhook_delivery" add constraint "webhook_delivery_event_id_foreign" foreign key ("event_id") references "webhook_event" ("id");`);

    this.addSql(`alter table "webhook_attempt" add constraint "webhook_attempt_delivery_id_foreign" foreign key ("delivery_id") references "webhook_delivery" ("id");`);
  }

  async down() {
    this.addSql(`alter table "invoice" drop constraint "invoice_merchant_id_foreign";`);
    this.addSql(`alter table "payment" drop constraint "payment_merchant_id_foreign";`);
    this.addSql(`alter table "webhook_event" drop constraint "webhook_event_merchant_id_foreign";`);
    this.addSql(`alter table "payment" drop constraint "payment_invoice_id_foreign";`);
    this.addSql(`alter table "webhook_delivery" drop constraint "webhook_delivery_event_id_foreign";`);
    this.addSql(`alter table "webhook_attempt" drop constraint "webhook_attempt_delivery_id_foreign";`);

    this.addSql(`drop table if exists "idempotency_record" cascade;`);
    this.addSql(`drop table if exists "indexed_block" cascade;`);
    this.addSql(`drop table if exists "indexer_cursor" cascade;`);
    this.addSql(`drop table if exists "merchant_point" cascade;`);
    this.addSql(`drop table if exists "invoice" cascade;`);
    this.addSql(`drop table if exists "observed_transfer" cascade;`);
    this.addSql(`drop table if exists "payment" cascade;`);
    this.addSql(`drop table if exists "reference_counter" cascade;`);
    this.addSql(`drop table if exists "wallet_address" cascade;`);
    this.addSql(`drop table if exists "webhook_event" cascade;`);
    this.addSql(`drop table if exists "webhook_delivery" cascade;`);
    this.addSql(`drop table if exists "webhook_attempt" cascade;`);
  }
}
