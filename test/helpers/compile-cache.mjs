// Loaded into every test process (package.json's test script): V8's compiled code is kept on disk,
// as bin/chaingate does for the CLI, so the many test files that load the same modules compile
// them once.
import module from 'node:module';

module.enableCompileCache?.();
