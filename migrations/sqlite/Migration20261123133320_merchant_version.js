import { Migration } from '@mikro-orm/migrations';

export class Migration20261123133320_merchant_version extends Migration {
  async up() {
    this.addSql(`alter table \`merchant_point\` add column \`version\` integer not null default 1;`);
  }

  async down() {
    this.addSql(`alter table \`merchant_point\` drop column \`version\`;`);
  }
}
