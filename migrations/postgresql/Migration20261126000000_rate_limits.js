import { Migration } from '@mikro-orm/migrations';

// Hand-written, PostgreSQL only: the rate-limit counters every `serve` process on the database
// shares (src/store/rate-limit-counters.ts; SQLite has one process, which counts in memory).
// No entity: only that module's statements touch them, and the schema diff skips them (orm.ts).
// Unlogged: a counter is worth nothing after a crash, so its updates write no WAL and wait for no
// flush. Half-full pages leave room for the new version of a row on its own page (HOT updates).
export class Migration20261126000000_rate_limits extends Migration {
  async up() {
    // Service-wide buckets: per client, the times (epoch ms, oldest first) of its last allowed
    // requests, as many as the largest bucket holds; `granted` is how many of the last batch passed.
    this.addSql(`create unlogged table "rate_limit_log" ("key" text not null primary key, "times" bigint[] not null, "granted" integer not null, "at" bigint not null) with (fillfactor = 50);`);
    // Per-route limits: per route and client, the requests counted in the fixed window ending at reset_at.
    this.addSql(`create unlogged table "rate_limit_window" ("key" text not null primary key, "count" integer not null, "reset_at" bigint not null, "at" bigint not null) with (fillfactor = 50);`);
  }

  async down() {
    this.addSql(`drop table if exists "rate_limit_window";`);
    this.addSql(`drop table if exists "rate_limit_log";`);
  }
}
