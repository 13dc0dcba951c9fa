import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty, idProperty } from './base.ts';

/** A user's role on a merchant point; point `*` is every point, present and future. */
const DashboardGrantSchema = defineEntity({
  name: 'DashboardGrant',
  uniques: [{ properties: ['userId', 'pointId'] }],
  properties: {
    id: idProperty(),
    userId: p.string().length(32),
    pointId: p.string().length(32),
    /** owner | manager | accountant | viewer (src/domain/dashboard-roles.ts). */
    role: p.string().length(16),
    createdAt: createdAtProperty(),
  },
});

export class DashboardGrant extends DashboardGrantSchema.class {}
DashboardGrantSchema.setClass(DashboardGrant);
export { DashboardGrantSchema };
