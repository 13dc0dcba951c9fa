import { Migration } from '@mikro-orm/migrations';

export class Migration20261201000000_indexer_error_seen extends Migration {
  async up() {
    this.addSql(`alter table "indexer_cursor" add "last_error_seen_at" timestamptz(3) null;`);
  }

  async down() {
    this.addSql(`alter table "indexer_cursor" drop column "last_error_seen_at";`);
  }
}
