/**
 * Risk class of a capability; the default policy allows `read` only. Its own module because
 * capabilities and authorizers both name it, and neither may import the other both ways.
 */
export type CapabilityRisk = 'read' | 'write' | 'destructive';
