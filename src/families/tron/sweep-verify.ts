import { UsageError } from '../../domain/errors.ts';
import type { FamilySweepVerifier } from '../sweep.ts';

// Placeholder until the tron reader of transaction bytes lands (issue 45): refuses everything.

export const tronSweepVerifier: FamilySweepVerifier = {
  decodeUnsigned: () => {
    throw new UsageError('tron transactions cannot be read yet');
  },
  decodeSigned: () => {
    throw new UsageError('tron transactions cannot be read yet');
  },
};
