import { Migration } from '@mikro-orm/migrations';

// Hand-written: MikroORM's schema diff treats json and jsonb alike. Merchant metadata is echoed as
// sent, and jsonb would reorder its keys; json keeps the text.
export class Migration20261121070000_metadata_json extends Migration {
  async up() {
    this.addSql(`alter table "invoice" alter column "customer_metadata" type json using "customer_metadata"::json;`);
    this.addSql(`alter table "invoice" alter column "metadata" type json using "metadata"::json;`);
  }

  async down() {
    this.addSql(`alter table "invoice" alter column "customer_metadata" type jsonb using "customer_metadata"::jsonb;`);
    this.addSql(`alter table "invoice" alter column "metadata" type jsonb using "metadata"::jsonb;`);
  }
}
