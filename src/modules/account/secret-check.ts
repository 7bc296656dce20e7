import type { AppContext, SecretCharge } from '../../context.js'
import { AppError, type ErrorCode } from '../../errors.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { SECRET_BUDGET_LIMIT, SECRET_BUDGET_WINDOW_MS } from './secret-budget.js'

/** 429 RATE_LIMIT_EXCEEDED with `Retry-After`: the seconds until the budget's window ends (at least 1). */
export function budgetSpentError(retryAfterMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000))
  return Object.assign(new AppError('RATE_LIMIT_EXCEEDED'), { headers: { 'retry-after': String(seconds) } })
}

/**
 * One check of a user's secret (a second-factor code, or the current password) under the per-user secret
 * budget. Call `take()` right before the secret is judged: it charges a failure, or throws 429 once the
 * budget is spent, even for the right secret. Settle it by the whole act's outcome, `run(wrong, act)` or
 * `act.then(check.passed, check.failedWith(wrong))`: when the act fails with the `wrong` code the charge
 * stays; anything else (a pass, a refusal that never judged the secret) gives it back.
 */
export class SecretCheck {
  private charge: SecretCharge | null = null

  constructor(
    private readonly ctx: AppContext,
    private readonly tenantId: string,
    private readonly userId: string,
    private readonly meta: RequestMeta,
    /** Called before the 429 is thrown (the login paths write their LOGIN failure row with it). */
    private readonly onSpent: () => Promise<unknown> = async () => {},
  ) {}

  /** Charges this check; 429 RATE_LIMIT_EXCEEDED with Retry-After when the budget is spent. */
  async take(): Promise<void> {
    const charge = await this.ctx.secretBudget.take(this.tenantId, this.userId, this.ctx.clock.now())
    if (!charge.taken) {
      await this.onSpent()
      throw budgetSpentError(charge.retryAfterMs)
    }
    this.charge = charge
  }

  /** Runs the act that calls take(); the charge stays only when it fails with `wrong`. */
  run<T>(wrong: ErrorCode, act: () => Promise<T>): Promise<T> {
    return act().then(this.passed, this.failedWith(wrong))
  }

  /** The act passed: the charge is given back (`act.then(check.passed, check.failedWith(code))`). */
  readonly passed = async <T>(out: T): Promise<T> => {
    await this.giveBack()
    return out
  }

  /** The act failed: the charge stays when the failure is `wrong`, else it is given back; rethrows. */
  failedWith(wrong: ErrorCode): (err: unknown) => Promise<never> {
    return async (err) => {
      if (err instanceof AppError && err.code === wrong) await this.kept()
      else await this.giveBack()
      throw err
    }
  }

  private async giveBack(): Promise<void> {
    const charge = this.charge
    this.charge = null
    if (charge) await this.ctx.secretBudget.giveBack(this.tenantId, this.userId, charge)
  }

  /** A failure stays counted; the one that spends the budget writes ACCOUNT_LOCKED (best effort). */
  private async kept(): Promise<void> {
    const charge = this.charge
    this.charge = null
    if (!charge?.taken || charge.failures !== SECRET_BUDGET_LIMIT) return
    const lockedSeconds = Math.ceil(
      (charge.windowStartedAt + SECRET_BUDGET_WINDOW_MS - this.ctx.clock.now()) / 1000,
    )
    await writeAudit(this.ctx.dbs.forTenant(this.tenantId), {
      tenantId: this.tenantId,
      action: 'ACCOUNT_LOCKED',
      success: true,
      userId: this.userId,
      metadata: { reason: `${SECRET_BUDGET_LIMIT} failed secret checks`, lockedSeconds },
      meta: this.meta,
    }).catch(() => undefined)
  }
}
