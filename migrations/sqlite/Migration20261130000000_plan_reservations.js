import { Migration } from '@mikro-orm/migrations';

export class Migration20261130000000_plan_reservations extends Migration {
  async up() {
    this.addSql(`alter table \`sweep_plan\` add column \`expires_at\` datetime null;`);
    this.addSql(`alter table \`sweep_plan\` add column \`cancelled_at\` datetime null;`);
    this.addSql(`alter table \`refund\` add column \`fee_from_payment\` text not null default '0';`);
  }

  async down() {
    this.addSql(`alter table \`sweep_plan\` drop column \`expires_at\`;`);
    this.addSql(`alter table \`sweep_plan\` drop column \`cancelled_at\`;`);
    this.addSql(`alter table \`refund\` drop column \`fee_from_payment\`;`);
  }
}
