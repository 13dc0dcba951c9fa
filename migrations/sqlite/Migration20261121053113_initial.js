import { Migration } from '@mikro-orm/migrations';

export class Migration20261121053113_initial extends Migration {
  async up() {
    this.addSql(`create table \`idempotency_record\` (\`id\` text not null primary key, \`merchant_id\` text not null, \`key\` text not null, \`fingerprint\` text not null, \`state\` text not null, \`status_code\` integer null, \`response_body\` text null, \`created_at\` datetime not null, \`expires_at\` datetime not null);`);
    this.addSql(`create index \`idempotency_record_expires_at_index\` on \`idempotency_record\` (\`expires_at\`);`);
    this.addSql(`create unique index \`idempotency_record_merchant_id_key_unique\` on \`idempotency_record\` (\`merchant_id\`, \`key\`);`);

    this.addSql(`create table \`indexed_block\` (\`id\` text not null primary key, \`chain\` text not null, \`network\` text not null, \`number\` bigint not null, \`hash\` text not null, \`parent_hash\` text not null);`);
    this.addSql(`create unique index \`indexed_block_chain_network_number_unique\` on \`indexed_block\` (\`chain\`, \`network\`, \`number\`);`);

    this.addSql(`create table \`indexer_cursor\` (\`id\` text not null primary key, \`chain\` text not null, \`network\` text not null, \`block_number\` text not null, \`block_hash\` text not null, \`lease_owner\` text null, \`lease_until\` datetime null, \`updated_at\` datetime not null);`);
    this.addSql(`create unique index \`indexer_cursor_chain_network_unique\` on \`indexer_cursor\` (\`chain\`, \`network\`);`);

    this.addSql(`create table \`merchant_point\` (\`id\` text not null primary key, \`name\` text not null, \`api_key\` text not null, \`api_secret_enc\` text not null, \`webhook_url\` text null, \`active\` integer not null default true, \`accepted_chains\` json null, \`accepted_currencies\` json null, \`webhook_events\` json null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create unique index \`merchant_point_api_key_unique\` on \`merchant_point\` (\`api_key\`);`);

    this.addSql(`create table \`invoice\` (\`id\` text not null primary key, \`reference_id\` text not null, \`merchant_id\` text not null, \`order_id\` text not null, \`description\` text not null default '', \`amount\` text not null, \`currency\` text not null, \`status\` text not null default 'DRAFT', \`customer_email\` text null, \`customer_name\` text null, \`customer_metadata\` json not null, \`metadata\` json not null, \`return_url\` text null, \`cancel_url\` text null, \`expires_at\` datetime not null, \`viewed_at\` datetime null, \`paid_at\` datetime null, \`cancelled_at\` datetime null, \`created_at\` datetime not null, \`updated_at\` datetime not null, constraint \`invoice_merchant_id_foreign\` foreign key (\`merchant_id\`) references \`merchant_point\` (\`id\`));`);
    this.addSql(`create unique index \`invoice_reference_id_unique\` on \`invoice\` (\`reference_id\`);`);
    this.addSql(`create index \`invoice_merchant_id_index\` on \`invoice\` (\`merchant_id\`);`);
    this.addSql(`create index \`invoice_merchant_id_order_id_index\` on \`invoice\` (\`merchant_id\`, \`order_id\`);`);
    this.addSql(`create index \`invoice_status_expires_at_index\` on \`invoice\` (\`status\`, \`expires_at\`);`);

    this.addSql(`create table \`observed_transfer\` (\`id\` text not null primary key, \`chain\` text not null, \`network\` text not null, \`tx_hash\` text not null, \`log_index\` integer not null, \`block_number\` text not null, \`block_hash\` text not null, \`from_address\` text null, \`to_address\` text not null, \`token_address\` text null, \`symbol\` text null, \`amount\` text not null, \`payment_id\` text null, \`status\` text not null, \`note\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create index \`observed_transfer_payment_id_index\` on \`observed_transfer\` (\`payment_id\`);`);
    this.addSql(`create index \`observed_transfer_chain_network_block_number_index\` on \`observed_transfer\` (\`chain\`, \`network\`, \`block_number\`);`);
    this.addSql(`create index \`observed_transfer_status_index\` on \`observed_transfer\` (\`status\`);`);
    this.addSql(`create unique index \`observed_transfer_chain_network_tx_hash_log_index_unique\` on \`observed_transfer\` (\`chain\`, \`network\`, \`tx_hash\`, \`log_index\`);`);

    this.addSql(`create table \`payment\` (\`id\` text not null primary key, \`reference_id\` text not null, \`invoice_id\` text not null, \`merchant_id\` text not null, \`status\` text not null default 'PENDING', \`payment_type\` text not null default 'DIRECT', \`method\` text not null default 'direct', \`blockchain\` text not null, \`network\` text not null, \`is_testnet\` integer not null default false, \`crypto_currency\` text not null, \`decimals\` integer not null, \`token_address\` text null, \`amount\` text not null, \`expected_amount\` text not null, \`received_amount\` text not null default '0', \`address\` text not null, \`confirmations\` integer not null default 0, \`required_confirmations\` integer not null, \`transaction_hash\` text null, \`block_number\` text null, \`contract_address\` text null, \`external_id\` text null, \`external_id_uuid\` text null, \`metadata\` json not null, \`expires_at\` datetime not null, \`completed_at\` datetime null, \`created_at\` datetime not null, \`updated_at\` datetime not null, constraint \`payment_invoice_id_foreign\` foreign key (\`invoice_id\`) references \`invoice\` (\`id\`), constraint \`payment_merchant_id_foreign\` foreign key (\`merchant_id\`) references \`merchant_point\` (\`id\`));`);
    this.addSql(`create unique index \`payment_reference_id_unique\` on \`payment\` (\`reference_id\`);`);
    this.addSql(`create index \`payment_invoice_id_index\` on \`payment\` (\`invoice_id\`);`);
    this.addSql(`create index \`payment_merchant_id_index\` on \`payment\` (\`merchant_id\`);`);
    this.addSql(`create unique index \`payment_external_id_unique\` on \`payment\` (\`external_id\`);`);
    this.addSql(`create index \`payment_merchant_id_created_at_index\` on \`payment\` (\`merchant_id\`, \`created_at\`);`);
    this.addSql(`create index \`payment_invoice_id_created_at_index\` on \`payment\` (\`invoice_id\`, \`created_at\`);`);
    this.addSql(`create index \`payment_blockchain_is_testnet_status_index\` on \`payment\` (\`blockchain\`, \`is_testnet\`, \`status\`);`);
    this.addSql(`create index \`payment_status_expires_at_index\` on \`payment\` (\`status\`, \`expires_at\`);`);

    this.addSql(`create table \`reference_counter\` (\`id\` text not null primary key, \`value\` integer not null);`);

    this.addSql(`create table \`wallet_address\` (\`id\` text not null primary key, \`chain\` text not null, \`is_testnet\` integer not null default false, \`address\` text not null, \`status\` text not null default 'FREE', \`derivation_index\` integer null, \`source\` text not null, \`payment_id\` text null, \`leased_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`wallet_address_payment_id_unique\` on \`wallet_address\` (\`payment_id\`);`);
    this.addSql(`create index \`wallet_address_chain_is_testnet_status_derivation_index_index\` on \`wallet_address\` (\`chain\`, \`is_testnet\`, \`status\`, \`derivation_index\`);`);
    this.addSql(`create unique index \`wallet_address_chain_is_testnet_address_unique\` on \`wallet_address\` (\`chain\`, \`is_testnet\`, \`address\`);`);

    this.addSql(`create table \`webhook_event\` (\`id\` text not null primary key, \`merchant_id\` text not null, \`type\` text not null, \`payload\` text not null, \`payment_id\` text null, \`invoice_id\` text null, \`created_at\` datetime not null, constraint \`webhook_event_merchant_id_foreign\` foreign key (\`merchant_id\`) references \`merchant_point\` (\`id\`));`);
    this.addSql(`create index \`webhook_event_merchant_id_index\` on \`webhook_event\` (\`merchant_id\`);`);
    this.addSql(`create index \`webhook_event_payment_id_index\` on \`webhook_event\` (\`payment_id\`);`);
    this.addSql(`create index \`webhook_event_invoice_id_index\` on \`webhook_event\` (\`invoice_id\`);`);
    this.addSql(`create index \`webhook_event_merchant_id_created_at_index\` on \`webhook_event\` (\`merchant_id\`, \`created_at\`);`);

    this.addSql(`create table \`webhook_delivery\` (\`id\` text not null primary key, \`event_id\` text not null, \`replay_of\` text null, \`state\` text not null default 'PENDING', \`attempt_count\` integer not null default 0, \`next_attempt_at\` datetime null, \`lease_owner\` text null, \`lease_until\` datetime null, \`last_status_code\` integer null, \`last_error\` text null, \`delivered_at\` datetime null, \`created_at\` datetime not null, \`updated_at\` datetime not null, constraint \`webhook_delivery_event_id_foreign\` foreign key (\`event_id\`) references \`webhook_event\` (\`id\`));`);
    this.addSql(`create index \`webhook_delivery_event_id_index\` on \`webhook_delivery\` (\`event_id\`);`);
    this.addSql(`create index \`webhook_delivery_state_next_attempt_at_index\` on \`webhook_delivery\` (\`state\`, \`next_attempt_at\`);`);

    this.addSql(`create table \`webhook_attempt\` (\`id\` text not null primary key, \`delivery_id\` text not null, \`attempted_at\` datetime not null, \`status_code\` integer null, \`duration_ms\` integer not null, \`response_body\` text null, \`error\` text null, constraint \`webhook_attempt_delivery_id_foreign\` foreign key (\`delivery_id\`) references \`webhook_delivery\` (\`id\`));`);
    this.addSql(`create index \`webhook_attempt_delivery_id_index\` on \`webhook_attempt\` (\`delivery_id\`);`);
  }

  async down() {

    this.addSql(`drop table if exists \`idempotency_record\`;`);
    this.addSql(`drop table if exists \`indexed_block\`;`);
    this.addSql(`drop table if exists \`indexer_cursor\`;`);
    this.addSql(`drop table if exists \`merchant_point\`;`);
    this.addSql(`drop table if exists \`invoice\`;`);
    this.addSql(`drop table if exists \`observed_transfer\`;`);
    this.addSql(`drop table if exists \`payment\`;`);
    this.addSql(`drop table if exists \`reference_counter\`;`);
    this.addSql(`drop table if exists \`wallet_address\`;`);
    this.addSql(`drop table if exists \`webhook_event\`;`);
    this.addSql(`drop table if exists \`webhook_delivery\`;`);
    this.addSql(`drop table if exists \`webhook_attempt\`;`);
  }
}
