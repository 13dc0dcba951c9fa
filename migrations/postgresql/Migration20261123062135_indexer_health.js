import { Migration } from '@mikro-orm/migrations';

export class Migration20261123062135_indexer_health extends Migration {
  async up() {
    this.addSql(`alter table "indexer_cursor" add "block_time" bigint null, add "head_number" varchar(32) null, add "finalized_number" varchar(32) null, add "head_seen_at" timestamptz(3) null, add "last_error" varchar(255) null, add "last_error_at" timestamptz(3) null;`);
  }

  async down() {
    this.addSql(`alter table "indexer_cursor" drop column "block_time", drop column "head_number", drop column "finalized_number", drop column "head_seen_at", drop column "last_error", drop column "last_error_at";`);
  }
}
