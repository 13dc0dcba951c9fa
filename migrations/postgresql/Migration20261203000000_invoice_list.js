import { Migration } from '@mikro-orm/migrations';

export class Migration20261203000000_invoice_list extends Migration {
  async up() {
    this.addSql(`create index "invoice_merchant_id_created_at_id_index" on "invoice" ("merchant_id", "created_at", "id");`);
    this.addSql(`create index "invoice_created_at_id_index" on "invoice" ("created_at", "id");`);
    this.addSql(`create index "invoice_order_id_index" on "invoice" ("order_id");`);
    this.addSql(`create index "invoice_updated_at_index" on "invoice" ("updated_at");`);
    this.addSql(`create index invoice_customer_email_lower_index on invoice (lower(customer_email));`);

    this.addSql(`create index "observed_transfer_updated_at_index" on "observed_transfer" ("updated_at");`);
    this.addSql(`create index observed_transfer_tx_hash_lower_index on observed_transfer (lower(tx_hash));`);

    this.addSql(`create index "payment_updated_at_index" on "payment" ("updated_at");`);
    this.addSql(`create index payment_address_lower_index on payment (lower(address));`);
    this.addSql(`create index payment_transaction_hash_lower_index on payment (lower(transaction_hash));`);
    this.addSql(`create index "payment_settled_off_index" on "payment" ("invoice_id", "received_amount", "expected_amount") where status = 'COMPLETED' and received_amount <> expected_amount;`);
  }

  async down() {
    this.addSql(`drop index "invoice_merchant_id_created_at_id_index";`);
    this.addSql(`drop index "invoice_created_at_id_index";`);
    this.addSql(`drop index "invoice_order_id_index";`);
    this.addSql(`drop index "invoice_updated_at_index";`);
    this.addSql(`drop index "invoice_customer_email_lower_index";`);

    this.addSql(`drop index "observed_transfer_updated_at_index";`);
    this.addSql(`drop index "observed_transfer_tx_hash_lower_index";`);

    this.addSql(`drop index "payment_updated_at_index";`);
    this.addSql(`drop index "payment_address_lower_index";`);
    this.addSql(`drop index "payment_transaction_hash_lower_index";`);
    this.addSql(`drop index "payment_settled_off_index";`);
  }
}
