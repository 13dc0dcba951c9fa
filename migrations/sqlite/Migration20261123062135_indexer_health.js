import { Migration } from '@mikro-orm/migrations';

export class Migration20261123062135_indexer_health extends Migration {
  async up() {
    this.addSql(`alter table \`indexer_cursor\` add column \`block_time\` bigint null;`);
    this.addSql(`alter table \`indexer_cursor\` add column \`head_number\` text null;`);
    this.addSql(`alter table \`indexer_cursor\` add column \`finalized_number\` text null;`);
    this.addSql(`alter table \`indexer_cursor\` add column \`head_seen_at\` datetime null;`);
    this.addSql(`alter table \`indexer_cursor\` add column \`last_error\` text null;`);
    this.addSql(`alter table \`indexer_cursor\` add column \`last_error_at\` datetime null;`);
  }

  async down() {
    this.addSql(`alter table \`indexer_cursor\` drop column \`block_time\`;`);
    this.addSql(`alter table \`indexer_cursor\` drop column \`head_number\`;`);
    this.addSql(`alter table \`indexer_cursor\` drop column \`finalized_number\`;`);
    this.addSql(`alter table \`indexer_cursor\` drop column \`head_seen_at\`;`);
    this.addSql(`alter table \`indexer_cursor\` drop column \`last_error\`;`);
    this.addSql(`alter table \`indexer_cursor\` drop column \`last_error_at\`;`);
  }
}
