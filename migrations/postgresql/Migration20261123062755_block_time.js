import { Migration } from '@mikro-orm/migrations';

export class Migration20261123062755_block_time extends Migration {
  async up() {
    this.addSql(`alter table "indexed_block" add "timestamp" bigint null;`);
  }

  async down() {
    this.addSql(`alter table "indexed_block" drop column "timestamp";`);
  }
}
