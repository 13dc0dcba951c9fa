import { p } from '@mikro-orm/core';
import { newId } from '../../domain/ids.ts';

/** Amount columns: decimal strings of up to 80 characters (spec "Limits"). */
export const amountColumn = () => p.string().length(80);

export const idProperty = () => p.string().primary().length(32).onCreate(() => newId());
export const createdAtProperty = () => p.datetime(3).onCreate(() => new Date());
export const updatedAtProperty = () =>
  p
    .datetime(3)
    .onCreate(() => new Date())
    .onUpdate(() => new Date());
