import { Migration } from '@mikro-orm/migrations';

export class Migration20261127000000_sweeps extends Migration {
  async up() {
    this.addSql(`create table "sweep_plan" ("id" varchar(64) not null, "chain" varchar(32) not null, "network" varchar(32) not null, "is_testnet" boolean not null default false, "kind" varchar(16) not null, "to_address" varchar(128) not null, "fee_payer" varchar(128) null, "body" text not null, "created_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "sweep_plan_chain_is_testnet_created_at_index" on "sweep_plan" ("chain", "is_testnet", "created_at");`);

    this.addSql(`create table "sweep_tx" ("id" varchar(32) not null, "plan_id" varchar(64) not null, "tx_key" varchar(16) not null, "chain" varchar(32) not null, "network" varchar(32) not null, "is_testnet" boolean not null default false, "txid" varchar(128) not null, "raw" text not null, "deposits" text not null, "moves" text not null, "fee" varchar(80) not null, "status" varchar(16) not null default 'SIGNED', "error" varchar(500) null, "attempts" int not null default 0, "sent_at" timestamptz(3) null, "final_at" timestamptz(3) null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "sweep_tx_txid_index" on "sweep_tx" ("txid");`);
    this.addSql(`create index "sweep_tx_chain_is_testnet_status_index" on "sweep_tx" ("chain", "is_testnet", "status");`);
    this.addSql(`alter table "sweep_tx" add constraint "sweep_tx_plan_id_tx_key_unique" unique ("plan_id", "tx_key");`);
  }

  async down() {
    this.addSql(`drop table if exists "sweep_plan" cascade;`);
    this.addSql(`drop table if exists "sweep_tx" cascade;`);
  }
}
