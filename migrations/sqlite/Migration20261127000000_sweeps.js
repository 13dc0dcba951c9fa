import { Migration } from '@mikro-orm/migrations';

export class Migration20261127000000_sweeps extends Migration {
  async up() {
    this.addSql(`create table \`sweep_plan\` (\`id\` text not null primary key, \`chain\` text not null, \`network\` text not null, \`is_testnet\` integer not null default false, \`kind\` text not null, \`to_address\` text not null, \`fee_payer\` text null, \`body\` text not null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`sweep_plan_chain_is_testnet_created_at_index\` on \`sweep_plan\` (\`chain\`, \`is_testnet\`, \`created_at\`);`);

    this.addSql(`create table \`sweep_tx\` (\`id\` text not null primary key, \`plan_id\` text not null, \`tx_key\` text not null, \`chain\` text not null, \`network\` text not null, \`is_testnet\` integer not null default false, \`txid\` text not null, \`raw\` text not null, \`deposits\` text not null, \`moves\` text not null, \`fee\` text not null, \`status\` text not null default 'SIGNED', \`error\` text null, \`attempts\` integer not null default 0, \`sent_at\` datetime null, \`final_at\` datetime null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create index \`sweep_tx_txid_index\` on \`sweep_tx\` (\`txid\`);`);
    this.addSql(`create index \`sweep_tx_chain_is_testnet_status_index\` on \`sweep_tx\` (\`chain\`, \`is_testnet\`, \`status\`);`);
    this.addSql(`create unique index \`sweep_tx_plan_id_tx_key_unique\` on \`sweep_tx\` (\`plan_id\`, \`tx_key\`);`);
  }

  async down() {
    this.addSql(`drop table if exists \`sweep_plan\`;`);
    this.addSql(`drop table if exists \`sweep_tx\`;`);
  }
}
