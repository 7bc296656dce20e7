/** What an administrative event is about (contract section 25's `metadata.target.type`, with 23's and 24's). */
export type AuditTargetType =
  | 'role'
  | 'permission'
  | 'user'
  | 'tenant'
  | 'client_key'
  | 'publishable_key'
  | 'oauth_client'
  | 'identity_provider'

/** The shape of one entry of generated/routes.ts: everything the document says about an operation. */
export interface RouteSpec {
  readonly operationId: string
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Fastify form, `:param`. */
  readonly url: string
  /** Document form, `{param}`. */
  readonly path: string
  /** From the operation's `security`: who may call it (`publishable-key`: the two sign-up operations). */
  readonly auth: 'public' | 'jwt' | 'jwt-or-key' | 'metrics' | 'publishable-key'
  /** `x-permission`: the permission the credential must hold, or null. */
  readonly permission: string | null
  /**
   * `x-rate-limit`: a route budget overriding the global one; false: counted against no per-IP budget
   * (GET /health, the balancers' probe); null: the global budget.
   */
  readonly rateLimit: { readonly max: number; readonly timeWindow: number } | false | null
  /**
   * `x-recent-auth: true`: an access token must come from a recent sign-in (its `auth_time`), else 401
   * REAUTHENTICATION_REQUIRED; Client Keys are not asked. Absent on every other operation.
   */
  readonly recentAuth?: true
  /**
   * `x-audit`: the administrative event (contract section 25) each authenticated call writes, success or
   * refusal: its action, its target's type, and the fields it sets when they are not the body's keys.
   */
  readonly audit?: {
    readonly action: string
    readonly target: AuditTargetType
    readonly changed?: readonly string[]
    /** The service writes the success row in its own transaction (sections 23, 24); the hook the refusals. */
    readonly refusalsOnly?: true
  }
  /**
   * `x-protocol: true`: an OAuth or OpenID endpoint whose query, form body and answer an RFC fixes; only its
   * path is validated here, and the protocol library (src/modules/oidc) answers the rest.
   */
  readonly protocol?: true
  readonly bodyRequired: boolean
  readonly successStatus: number
  readonly schema: {
    readonly params?: object
    readonly querystring?: object
    readonly body?: object
    readonly response?: Readonly<Record<string, object>>
  }
}
