import type { ReportChoices } from '../../app/dashboard-reports.ts';
import { html, type Html } from './html.ts';
import { form, notice, page, type Layout } from './pages.ts';

// The Reports page: the accountant's export (`chaingate report`) for a date range and a point, as
// a CSV or JSON download. Only shown to a role that may export; the endpoint refuses the others.

export interface ReportForm {
  from: string;
  to: string;
  format: string;
  pointId: string;
}

export function reportsPage(l: Layout, choices: ReportChoices, values: ReportForm, error: string | null): Html {
  const v = values;
  return page(l, html`${notice(error, false)}
${form('/dashboard/api/reports', l.csrf, html`<h2>Download the accountant's export</h2>
<p>One row per payment received (at the rate it was priced at), late funds, refund and sweep, with totals: the same file as <code>chaingate report</code>. Days are UTC; both are included.</p>
<div class="report-range">
<div><label for="from">First day</label><input id="from" name="from" type="date" required value="${v.from}"></div>
<div><label for="to">Last day</label><input id="to" name="to" type="date" required value="${v.to}"></div>
</div>
<label for="point">Point</label>
<select id="point" name="point">
${choices.everyPoint ? html`<option value="" ${v.pointId === '' ? 'selected' : ''}>Every point (sweeps included)</option>` : ''}
${choices.points.map((p) => html`<option value="${p.id}" ${v.pointId === p.id ? 'selected' : ''}>${p.name}</option>`)}
</select>
<p class="hint">A single point's file leaves sweeps out: a sweep empties the chain's pool, which every point shares.</p>
<fieldset><legend>Format</legend>
<label class="choice"><input type="radio" name="format" value="csv" ${v.format !== 'json' ? 'checked' : ''}> CSV (spreadsheets)</label>
<label class="choice"><input type="radio" name="format" value="json" ${v.format === 'json' ? 'checked' : ''}> JSON (exact amounts as strings)</label>
</fieldset>
<button type="submit">Download</button>`)}`);
}
