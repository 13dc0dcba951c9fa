import { UsageError } from '../../domain/errors.ts';
import type { FamilySweepVerifier } from '../sweep.ts';

// Placeholder until the ton reader of transaction bytes lands (issue 45): refuses everything.

export const tonSweepVerifier: FamilySweepVerifier = {
  decodeUnsigned: () => {
    throw new UsageError('ton transactions cannot be read yet');
  },
  decodeSigned: () => {
    throw new UsageError('ton transactions cannot be read yet');
  },
};
