// A new workspace: default settings, no budgets, an empty meter.
import { randomUUID } from 'node:crypto';
import { newMeter } from '../billing/meter.js';
import { DEFAULT_WORKSPACE_SETTINGS, type Workspace, type WorkspaceSettings } from './types.js';

/** Lowercase alphanumeric segments separated by single hyphens. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** A workspace's default_guardrail_id: derived from its id; the guardrail's settings are the workspace's budgets. */
export const DEFAULT_GUARDRAIL_PREFIX = 'grd_';
export const defaultGuardrailId = (workspaceId: string): string => `${DEFAULT_GUARDRAIL_PREFIX}${workspaceId}`;

export function slugFor(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'default';
}

export function newWorkspace(orgId: string, settings: Partial<WorkspaceSettings> & Pick<WorkspaceSettings, 'name' | 'slug'>, createdBy: string | null, now: Date): Workspace {
  const at = now.toISOString();
  return {
    ...DEFAULT_WORKSPACE_SETTINGS,
    ...settings,
    id: randomUUID(),
    org_id: orgId,
    created_by: createdBy,
    created_at: at,
    updated_at: at,
    budgets: {},
    include_byok_in_budgets: false,
    budget_version: 0,
    meter: newMeter(now),
  };
}
