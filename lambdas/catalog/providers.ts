// Which providers a customer may bring their own key for: every provider of the catalog except those
// served through Bedrock, which the gateway calls with its own AWS role.
import type { Catalog } from './types.js';

export function byokProviders(catalog: Catalog): Set<string> {
  const providers = new Set<string>();
  for (const model of catalog.models) for (const endpoint of model.endpoints) if (endpoint.adapter !== 'bedrock') providers.add(endpoint.provider);
  return providers;
}
