import { Migration } from '@mikro-orm/migrations';

// Hand-written, PostgreSQL only: the shared rate-limit counters in one row per client instead of
// a row per client and another per client and route, so that a request costs the database one
// row update, not two (src/store/rate-limit-counters.ts, docs/rate-limits.md#cost). The table keeps
// the name `rate_limit_log`, which the schema diff already skips (src/store/orm.ts); counters are
// worth nothing across an upgrade, so the old rows are dropped, not converted.
export class Migration20261129120000_rate_limit_rows extends Migration {
  async up() {
    this.addSql(`drop table if exists "rate_limit_window";`);
    this.addSql(`drop table if exists "rate_limit_log";`);
    // Per client: `times`, the times (epoch ms, oldest first) of its last allowed requests, as many
    // as the largest service-wide bucket holds; `counts` and `resets`, per route slot (1 to 5, 6 for
    // routes without a window), the requests counted in the fixed window ending at that reset;
    // `slot` and `granted`, the route slot and the requests of the row's last statement that passed;
    // `at`, when the row was last written. Unlogged and half-full pages as before (HOT updates).
    this.addSql(
      `create unlogged table "rate_limit_log" ("key" text collate "C" not null primary key, "slot" integer not null, "granted" integer not null, "times" bigint[] not null, "at" bigint not null, "counts" integer[] not null, "resets" bigint[] not null) with (fillfactor = 50);`,
    );
  }

  async down() {
    this.addSql(`drop table if exists "rate_limit_log";`);
    this.addSql(`create unlogged table "rate_limit_log" ("key" text not null primary key, "times" bigint[] not null, "granted" integer not null, "at" bigint not null) with (fillfactor = 50);`);
    this.addSql(`create unlogged table "rate_limit_window" ("key" text not null primary key, "count" integer not null, "reset_at" bigint not null, "at" bigint not null) with (fillfactor = 50);`);
  }
}
