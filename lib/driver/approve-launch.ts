/**
 * The approval gate of an allow entry with `approveOnCreate`: the host's approver (Driver.open's
 * approveCreate, a person's decision) is asked before anything is journaled or launched.
 */
import { PolicyError } from '../common/errors.js';
import type { CreateApprovalRequest, DriverOptions } from './driver-options.js';

/** Resolves when the launch is approved; throws APPROVAL_REQUIRED (no approver) or APPROVAL_DENIED. */
export async function approveLaunch(approver: DriverOptions['approveCreate'], request: CreateApprovalRequest): Promise<void> {
  const { allowId, name } = request;
  if (approver === undefined) {
    throw new PolicyError('APPROVAL_REQUIRED', `allow entry "${allowId}" requires approval at create (approveOnCreate), and this driver has no approver (Driver.open({ approveCreate })); nothing was launched`, { allowId, name });
  }
  let approved: unknown;
  try {
    approved = await approver(request);
  } catch (err) {
    throw new PolicyError('APPROVAL_DENIED', `the approver of allow entry "${allowId}" failed for drive "${name}"; nothing was launched`, { allowId, name }, { cause: err });
  }
  // Only a literal true approves: a truthy string or object returned by mistake does not.
  if (approved !== true) throw new PolicyError('APPROVAL_DENIED', `launch of drive "${name}" (allow entry "${allowId}") was not approved; nothing was launched`, { allowId, name });
}
