import { Migration } from '@mikro-orm/migrations';

export class Migration20261123230219_lease_order extends Migration {
  async up() {
    this.addSql(`drop index \`wallet_address_chain_is_testnet_status_derivation_index_index\`;`);
    this.addSql(`create index \`wallet_address_chain_is_testnet_status_derivation_index_created_at_id_index\` on \`wallet_address\` (\`chain\`, \`is_testnet\`, \`status\`, \`derivation_index\`, \`created_at\`, \`id\`);`);
  }

  async down() {
    this.addSql(`drop index \`wallet_address_chain_is_testnet_status_derivation_index_created_at_id_index\`;`);
    this.addSql(`create index \`wallet_address_chain_is_testnet_status_derivation_index_index\` on \`wallet_address\` (\`chain\`, \`is_testnet\`, \`status\`, \`derivation_index\`);`);
  }
}
