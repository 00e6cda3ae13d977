// Which providers a customer may bring their own key for: every provider of the catalog except those
// served through Bedrock, which the gateway calls with its own AWS role.
import type { Catalog } from './types.js';

export function byokProviders(catalog: Catalog): Set<string> {
  const providers = new Set<string>();
  for (const model of catalog.models) for (const endpoint of model.endpoints) if (endpoint.adapter !== 'bedrock') providers.add(endpoint.provider);
  return providers;
}

/** Each provider's display name, by its slug (reports and generation records show the name). */
export function providerNames(catalog: Catalog): Map<string, string> {
  const names = new Map<string, string>();
  for (const model of catalog.models) for (const endpoint of model.endpoints) names.set(endpoint.provider, endpoint.provider_name);
  return names;
}
