// The workspaces feature as other folders see it: the workspace and budget routes (workspaces themselves
// are part of the organizations aggregate).
export { workspaceRoutes, type WorkspaceOperations } from './routes.js';
export { createWorkspaceOperations, type WorkspacePorts } from './operations.js';
