import { Migration } from '@mikro-orm/migrations';

export class Migration20261128000000_refunds extends Migration {
  async up() {
    this.addSql(`create table \`refund\` (\`id\` text not null primary key, \`payment_id\` text not null, \`plan_id\` text not null, \`chain\` text not null, \`network\` text not null, \`is_testnet\` integer not null default false, \`symbol\` text not null, \`token_address\` text null, \`decimals\` integer not null, \`amount\` text not null, \`to_address\` text not null, \`from_address\` text not null, \`from_kind\` text not null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`refund_plan_id_unique\` on \`refund\` (\`plan_id\`);`);
    this.addSql(`create index \`refund_payment_id_created_at_index\` on \`refund\` (\`payment_id\`, \`created_at\`);`);
  }

  async down() {
    this.addSql(`drop table if exists \`refund\`;`);
  }
}
