import { Migration } from '@mikro-orm/migrations';

export class Migration20261202000000_dashboard extends Migration {
  async up() {
    this.addSql(`create table \`audit_entry\` (\`id\` text not null primary key, \`user_id\` text null, \`actor\` text not null, \`action\` text not null, \`point_id\` text null, \`ip\` text null, \`user_agent\` text null, \`details\` json null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`audit_entry_created_at_index\` on \`audit_entry\` (\`created_at\`);`);
    this.addSql(`create index \`audit_entry_point_id_created_at_index\` on \`audit_entry\` (\`point_id\`, \`created_at\`);`);

    this.addSql(`create table \`dashboard_grant\` (\`id\` text not null primary key, \`user_id\` text not null, \`point_id\` text not null, \`role\` text not null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`dashboard_grant_user_id_point_id_unique\` on \`dashboard_grant\` (\`user_id\`, \`point_id\`);`);

    this.addSql(`create table \`dashboard_session\` (\`id\` text not null primary key, \`token_hash\` text not null, \`user_id\` text not null, \`stage\` text not null, \`csrf_token\` text not null, \`challenge\` text null, \`ip\` text null, \`user_agent\` text null, \`created_at\` datetime not null, \`last_seen_at\` datetime not null, \`expires_at\` datetime not null);`);
    this.addSql(`create unique index \`dashboard_session_token_hash_unique\` on \`dashboard_session\` (\`token_hash\`);`);
    this.addSql(`create index \`dashboard_session_user_id_index\` on \`dashboard_session\` (\`user_id\`);`);

    this.addSql(`create table \`dashboard_user\` (\`id\` text not null primary key, \`email\` text not null, \`password_hash\` text null, \`active\` integer not null default true, \`totp_secret_enc\` text null, \`setup_token_hash\` text null, \`setup_expires_at\` datetime null, \`totp_last_step\` bigint null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create unique index \`dashboard_user_email_unique\` on \`dashboard_user\` (\`email\`);`);
    this.addSql(`create unique index \`dashboard_user_setup_token_hash_unique\` on \`dashboard_user\` (\`setup_token_hash\`);`);

    this.addSql(`create table \`recovery_code\` (\`id\` text not null primary key, \`user_id\` text not null, \`code_hash\` text not null, \`used_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`recovery_code_user_id_code_hash_unique\` on \`recovery_code\` (\`user_id\`, \`code_hash\`);`);

    this.addSql(`create table \`signin_throttle\` (\`key\` text not null primary key, \`failures\` integer not null default 0, \`blocked_until\` datetime not null, \`updated_at\` datetime not null);`);

    this.addSql(`create table \`webauthn_challenge\` (\`challenge\` text not null primary key, \`expires_at\` datetime not null);`);

    this.addSql(`create table \`webauthn_credential\` (\`id\` text not null primary key, \`user_id\` text not null, \`credential_id\` text not null, \`public_key\` text not null, \`counter\` bigint not null default '0', \`transports\` json null, \`name\` text not null, \`created_at\` datetime not null, \`last_used_at\` datetime null);`);
    this.addSql(`create unique index \`webauthn_credential_credential_id_unique\` on \`webauthn_credential\` (\`credential_id\`);`);
    this.addSql(`create index \`webauthn_credential_user_id_index\` on \`webauthn_credential\` (\`user_id\`);`);
  }

  async down() {
    this.addSql(`drop table if exists \`audit_entry\`;`);
    this.addSql(`drop table if exists \`dashboard_grant\`;`);
    this.addSql(`drop table if exists \`dashboard_session\`;`);
    this.addSql(`drop table if exists \`dashboard_user\`;`);
    this.addSql(`drop table if exists \`recovery_code\`;`);
    this.addSql(`drop table if exists \`signin_throttle\`;`);
    this.addSql(`drop table if exists \`webauthn_challenge\`;`);
    this.addSql(`drop table if exists \`webauthn_credential\`;`);
  }
}
