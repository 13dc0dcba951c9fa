import { Migration } from '@mikro-orm/migrations';

export class Migration20261121054143_webhooks extends Migration {
  async up() {
    this.addSql(`create index "webhook_delivery_event_id_index" on "webhook_delivery" ("event_id");`);

    this.addSql(`alter table "webhook_attempt" add "attempt_number" int null, add "url" varchar(2048) null;`);
    this.addSql(`create index "webhook_attempt_delivery_id_index" on "webhook_attempt" ("delivery_id");`);
  }

  async down() {
    this.addSql(`drop index "webhook_attempt_delivery_id_index";`);
    this.addSql(`alter table "webhook_attempt" drop column "attempt_number", drop column "url";`);

    this.addSql(`drop index "webhook_delivery_event_id_index";`);
  }
}
