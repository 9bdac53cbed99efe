import type { AuditLog, ConfirmationRepository, KeyAccess } from '@calgate/store';
import type { ConfirmationStore, DecisionRecord, SessionOptions } from '@calgate/tools';

const OUTCOMES: Record<DecisionRecord['decision'], 'ok' | 'denied'> = {
  asked: 'ok',
  accepted: 'ok',
  used: 'ok',
  declined: 'denied',
  refused: 'denied',
};

/** The audit names of decisions about risky actions, for the audit filter. */
export const DECISION_NAMES: readonly string[] = Object.keys(OUTCOMES).map(
  (decision) => `confirmation.${decision}`,
);

/**
 * One key's view of the confirmations of risky actions, and the audit row of every decision
 * about them (`confirmation.asked`, `.accepted`, `.declined`, `.refused`, `.used`): the tool and
 * the confirmation id as targets, never arguments or calendar text.
 */
export function confirmationsFor(
  repository: ConfirmationRepository,
  audit: AuditLog,
  key: KeyAccess,
  request: { requestId: string; clientName: string | null; clientAddress: string | null },
): Pick<SessionOptions, 'confirmations' | 'onDecision'> {
  const { tenantId, keyId } = key;
  const confirmations: ConfirmationStore = {
    create: (input) => repository.create(tenantId, keyId, input),
    use: (id, tool, argsHash) => repository.use(tenantId, keyId, id, tool, argsHash),
  };
  const known = new Set(key.calendars.map((calendar) => calendar.id));
  return {
    confirmations,
    onDecision: (record) =>
      audit.record({
        tenantId,
        keyId,
        requestId: request.requestId,
        tool: `confirmation.${record.decision}`,
        calendarIds: record.calendarIds.filter((id) => known.has(id)),
        outcome: OUTCOMES[record.decision],
        errorCode: null,
        latencyMs: 0,
        target: [
          `tool=${record.tool}`,
          ...(record.confirmationId === undefined ? [] : [record.confirmationId]),
        ],
        clientName: request.clientName,
        clientAddress: request.clientAddress,
        at: new Date(),
      }),
  };
}
