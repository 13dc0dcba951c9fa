import { Migration } from '@mikro-orm/migrations';

export class Migration20261121054143_webhooks extends Migration {
  async up() {
    this.addSql(`alter table \`webhook_attempt\` add column \`attempt_number\` integer null;`);
    this.addSql(`alter table \`webhook_attempt\` add column \`url\` text null;`);
  }

  async down() {
    this.addSql(`alter table \`webhook_attempt\` drop column \`attempt_number\`;`);
    this.addSql(`alter table \`webhook_attempt\` drop column \`url\`;`);
  }
}
