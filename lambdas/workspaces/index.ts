// The workspaces feature as other folders see it: the workspace and budget routes (the Workspace type and
// its repository live in organizations/, beside the organization a workspace is created with).
export { workspaceRoutes, type WorkspaceOperations } from './routes.js';
export { createWorkspaceOperations, type WorkspacePorts } from './operations.js';
