import { Migration } from '@mikro-orm/migrations';

export class Migration20261128000000_refunds extends Migration {
  async up() {
    this.addSql(`create table "refund" ("id" varchar(32) not null, "payment_id" varchar(32) not null, "plan_id" varchar(64) not null, "chain" varchar(32) not null, "network" varchar(32) not null, "is_testnet" boolean not null default false, "symbol" varchar(16) not null, "token_address" varchar(128) null, "decimals" int not null, "amount" varchar(80) not null, "to_address" varchar(128) not null, "from_address" varchar(128) not null, "from_kind" varchar(16) not null, "created_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "refund" add constraint "refund_plan_id_unique" unique ("plan_id");`);
    this.addSql(`create index "refund_payment_id_created_at_index" on "refund" ("payment_id", "created_at");`);
  }

  async down() {
    this.addSql(`drop table if exists "refund" cascade;`);
  }
}
