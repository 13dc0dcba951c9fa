import { MigrationGenerator } from '@mikro-orm/migrations';

/** Writes migrations as ES modules so the compiled daemon loads them without a TypeScript loader. */
export class EsmMigrationGenerator extends MigrationGenerator {
  override generateMigrationFile(className: string, diff: { up: string[]; down: string[] }): string {
    let out = `import { Migration } from '@mikro-orm/migrations';\n\n`;
    out += `export class ${className} extends Migration {\n`;
    out += `  async up() {\n`;
    for (const sql of diff.up) out += this.createStatement(sql, 4);
    out += `  }\n`;
    if (diff.down.length > 0) {
      out += `\n  async down() {\n`;
      for (const sql of diff.down) out += this.createStatement(sql, 4);
      out += `  }\n`;
    }
    out += `}\n`;
    return out;
  }
}
