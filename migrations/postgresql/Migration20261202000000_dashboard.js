import { Migration } from '@mikro-orm/migrations';

export class Migration20261202000000_dashboard extends Migration {
  async up() {
    this.addSql(`create table "audit_entry" ("id" varchar(32) not null, "user_id" varchar(32) null, "actor" varchar(320) not null, "action" varchar(64) not null, "point_id" varchar(32) null, "ip" varchar(64) null, "user_agent" varchar(512) null, "details" jsonb null, "created_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "audit_entry_created_at_index" on "audit_entry" ("created_at");`);
    this.addSql(`create index "audit_entry_point_id_created_at_index" on "audit_entry" ("point_id", "created_at");`);

    this.addSql(`create table "dashboard_grant" ("id" varchar(32) not null, "user_id" varchar(32) not null, "point_id" varchar(32) not null, "role" varchar(16) not null, "created_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "dashboard_grant" add constraint "dashboard_grant_user_id_point_id_unique" unique ("user_id", "point_id");`);

    this.addSql(`create table "dashboard_session" ("id" varchar(32) not null, "token_hash" varchar(64) not null, "user_id" varchar(32) not null, "stage" varchar(8) not null, "csrf_token" varchar(64) not null, "challenge" varchar(128) null, "ip" varchar(64) null, "user_agent" varchar(512) null, "created_at" timestamptz(3) not null, "last_seen_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "dashboard_session" add constraint "dashboard_session_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "dashboard_session_user_id_index" on "dashboard_session" ("user_id");`);

    this.addSql(`create table "dashboard_user" ("id" varchar(32) not null, "email" varchar(320) not null, "password_hash" text null, "active" boolean not null default true, "totp_secret_enc" text null, "setup_token_hash" varchar(64) null, "setup_expires_at" timestamptz(3) null, "totp_last_step" bigint null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "dashboard_user" add constraint "dashboard_user_email_unique" unique ("email");`);
    this.addSql(`alter table "dashboard_user" add constraint "dashboard_user_setup_token_hash_unique" unique ("setup_token_hash");`);

    this.addSql(`create table "recovery_code" ("id" varchar(32) not null, "user_id" varchar(32) not null, "code_hash" varchar(64) not null, "used_at" timestamptz(3) null, "created_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "recovery_code" add constraint "recovery_code_user_id_code_hash_unique" unique ("user_id", "code_hash");`);

    this.addSql(`create table "signin_throttle" ("key" varchar(80) not null, "failures" int not null default 0, "blocked_until" timestamptz(3) not null, "updated_at" timestamptz(3) not null, primary key ("key"));`);

    this.addSql(`create table "webauthn_challenge" ("challenge" varchar(128) not null, "expires_at" timestamptz(3) not null, primary key ("challenge"));`);

    this.addSql(`create table "webauthn_credential" ("id" varchar(32) not null, "user_id" varchar(32) not null, "credential_id" varchar(1024) not null, "public_key" text not null, "counter" bigint not null default '0', "transports" jsonb null, "name" varchar(64) not null, "created_at" timestamptz(3) not null, "last_used_at" timestamptz(3) null, primary key ("id"));`);
    this.addSql(`alter table "webauthn_credential" add constraint "webauthn_credential_credential_id_unique" unique ("credential_id");`);
    this.addSql(`create index "webauthn_credential_user_id_index" on "webauthn_credential" ("user_id");`);
  }

  async down() {
    this.addSql(`drop table if exists "audit_entry" cascade;`);
    this.addSql(`drop table if exists "dashboard_grant" cascade;`);
    this.addSql(`drop table if exists "dashboard_session" cascade;`);
    this.addSql(`drop table if exists "dashboard_user" cascade;`);
    this.addSql(`drop table if exists "recovery_code" cascade;`);
    this.addSql(`drop table if exists "signin_throttle" cascade;`);
    this.addSql(`drop table if exists "webauthn_challenge" cascade;`);
    this.addSql(`drop table if exists "webauthn_credential" cascade;`);
  }
}
