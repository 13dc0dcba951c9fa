import { Migration } from '@mikro-orm/migrations';

export class Migration20261125021712_payment_changes extends Migration {
  async up() {
    this.addSql(`create index \`payment_blockchain_is_testnet_updated_at_index\` on \`payment\` (\`blockchain\`, \`is_testnet\`, \`updated_at\`);`);
  }

  async down() {
    this.addSql(`drop index \`payment_blockchain_is_testnet_updated_at_index\`;`);
  }
}
