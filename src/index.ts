/**
 * Warrant: a governed execution runtime. This file is the package's only public surface
 * (docs/api.md); it re-exports, and holds no logic.
 * @module
 */
export { OperatorRuntime, operatorRuntime } from './runtime/operator-runtime.js';
export type {
  OperatorRuntimeOptions,
  ExecutePlanOptions,
  ApprovalListFilter,
  ApprovalCountFilter,
  ApprovalPage,
  CancelJobOptions,
  CancelPolicy,
  ReadPolicy,
  SubmitPlanOptions,
  SubmittedJob,
  WaitForJobOptions,
  WaitingJob,
} from './runtime/operator-runtime.js';
export type { ApprovalsOptions, ApproverPolicy } from './approvals/approver-policy.js';
export type {
  NotificationDelivery,
  NotificationDestination,
  NotificationEvent,
} from './notifications/notification-options.js';
export type {
  // The store interface (docs/api.md, "Stores"): the core and its named parts, with what they hold.
  JobStore,
  JobChange,
  AwaitingIndex,
  AwaitingJob,
  ChainStore,
  RecordedChain,
  CheckpointStore,
  CheckpointEntry,
  SealedEntry,
  SealedApproval,
  ApprovalLeaf,
  LedgerEntry,
  StoreSeals,
  JobSeal,
  SealScanStore,
  StoreScan,
  ScannedJob,
  ScannedEntry,
  ApprovalLedger,
  ConsumedApproval,
  ConsumedRequest,
  CancelStore,
  StoredCancel,
  IdempotencyStore,
  IdempotencyClaim,
  IdempotencyHolder,
  OwnedStore,
  QueueStore,
  AvailabilityStore,
  LimitStore,
  LimitTake,
  LimitVerdict,
  LimitCounter,
  OutboxStore,
  JobStoreOutbox,
  OutboxWriter,
  OutboxEntry,
  OutboxRecord,
  OutboxStatus,
  NotificationRecord,
  StoreAvailability,
} from './jobs/job-store.js';
export type { LimitDefinition, LimitScope } from './limits/limit-options.js';
export type { LimitCounterShown, LimitShown, LimitsView } from './limits/limits-view.js';
export type { ApprovalRequest, StepApprovalRequest } from './approvals/approval-request.js';
export type { ApprovalDecision } from './approvals/decision-arguments.js';
export type {
  PlanApprovalDecision,
  PlanApprovalRequest,
  PlanApprovalStep,
} from './approvals/plan-request.js';
export type { PlanRequestStep } from './jobs/plan-grant.js';
export { createCapability } from './capabilities/create-capability.js';
export { createHttpCapability } from './net/http-capability.js';
export type { HttpCapabilityDefinition, HttpCapabilityResponse } from './net/http-capability.js';
export type {
  HostResolver,
  HttpEffect,
  HttpRequestSpec,
  ResolvedAddress,
} from './net/guarded-http.js';
export { defineModule } from './capabilities/define-module.js';
export type { CapabilityInputSchema, InferCapabilityInput } from './capabilities/capability.js';
export { TimeoutMiddleware } from './capabilities/timeout-middleware.js';
export { LifecycleLoggingMiddleware } from './capabilities/lifecycle-logging-middleware.js';
export { McpAdapter } from './mcp/mcp-adapter.js';
export type { McpAdapterOptions, McpCallerRequest, McpToolNameRequest } from './mcp/mcp-adapter.js';
export { isPlanAdmissionError } from './plan/plan-admission-error.js';
export type { PlanAdmissionError, PlanAdmissionIssue } from './plan/plan-admission-error.js';
export type { ExecutionPlan, ExecutionStep, ResultReference } from './plan/execution-plan.js';
export type { BoundSchema, BoundType, StepBounds } from './plan/bounds.js';
export type { PlanSchemaOptions } from './plan/plan-schema.js';
export type {
  Capability,
  CapabilityRisk,
  CapabilityInputField,
  CapabilityDescriptor,
  CapabilityDefinition,
  CapabilityMiddleware,
  CapabilityExecution,
  CapabilityModule,
  CapabilityModuleManifest,
  ExecutionContext,
  ExecutionLogger,
  FieldsFirstLogger,
  PrepareContext,
} from './capabilities/capability.js';
export type {
  ExecutionAuthorizer,
  CapabilityAuthorizationContext,
  CapabilityAuthorizationDecision,
  ApprovalGrant,
} from './authorization/authorizer.js';
export { isCapabilityStep, type CapabilityStepContext } from './authorization/capability-step.js';
export type { ExecutionActor, ExecutionCaller } from './callers/execution-caller.js';
export { effectiveScopes } from './callers/actor-chain.js';
export { cedarAuthorizer } from './policy/cedar-authorizer.js';
export type { CedarAuthorizerOptions } from './policy/cedar-authorizer.js';
export { cedarSchema, validateCedarPolicies } from './policy/cedar-schema.js';
export type { CedarPolicyProblem } from './policy/cedar-schema.js';
export type { PlanPreview, PreviewStep, PreviewOutcome } from './policy/preview.js';
export type {
  Job,
  JobStep,
  JobStatus,
  JobStepStatus,
  JobOutcome,
  JobEvent,
  JobEventType,
  JobListFilter,
  StepDecision,
  DecisionApproval,
  DecisionOutcome,
} from './jobs/job.js';
export type { JobVerification } from './record/verify-record.js';
export type { StoreProblem, StoreVerification } from './record/verify-store.js';
export type { Checkpoint } from './jobs/job-store.js';
export type { CheckpointHead } from './record/checkpoint.js';
export { verifyEvidence } from './record/evidence.js';
export type {
  EvidenceBundle,
  EvidenceProblem,
  EvidenceVerification,
  VerifyEvidenceOptions,
} from './record/evidence.js';
export type { RuntimeEvent, RuntimeEventHandler } from './events/runtime-event.js';
