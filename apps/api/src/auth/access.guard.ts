import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  ForbiddenError,
  InvalidCommandError,
  LIMITS,
  LimitExceededError,
  NotFoundError,
  type RoomRole,
} from '@chronicle/adventure';
import {
  AccountsRepository,
  AdventureOwners,
  DailyTokenBudget,
  RateLimitedError,
  RateLimiter,
  UnauthorizedError,
  keysEqual,
} from '@chronicle/accounts';
import { currentLogContext, type AppConfig } from '@chronicle/platform';
import type { NextFunction, Request, Response } from 'express';
import { answerFor, errorBody } from '../http/error.filter';
import { isUuid } from '../http/path-params.pipe';
import { AUTH_CONFIG } from './auth.config';
import { isAdminPath, isAdminRoute, isOpenRequest } from './open-paths';
import { attachRequestUser, requestUserOf, type RequestUser } from './request-user';
import { STARTS_TURN } from './starts-turn.decorator';

// One guard decides every request, in two steps.
//
// `admit` runs first, before routing, for every request whatever its path: only the explicit
// allow-list (OPEN_PATHS, matched as sent) is open; every other request — a route, a typo, a
// case, slash, percent-encoding, dot-segment or `;params` spelling of either — needs a key. A
// path any router could read as /v1/admin or /metrics needs the admin key; everything else a
// user's key.
// So no spelling can reach a handler unauthenticated, whatever Express's matching does.
//
// `canActivate` runs on the route Express matched (case-sensitive and strict, see
// configureHttp): it refuses a route the first step did not authenticate for (fail closed),
// then how often they may ask (Redis counters shared by every API instance), whether the
// adventure in the path is one they are in, and as what, and the daily model budget. Access is
// checked here, once, for every route under /v1/adventures/:id — streams, events, export, time
// travel and memories included — so no use case can forget it. An adventure the caller is no
// member of is answered exactly like a missing one: 404. In a room (spec/multiplayer.md §3.1)
// the host may do everything the owner does; a player reads, acts and plays the round
// (PLAYER_WRITES); a spectator reads; any member may change or leave their own membership. A
// write on no list is the host's alone (fail closed): 403 naming the caller's role. The role is
// read per request from adventure_members (an indexed lookup, written with the events), so a
// kick or a role change holds on every API process at once.

const ADVENTURE_ROUTE = /^\/v1\/adventures\/:(\w+)(?:\/|$)/;
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The writes a player may make besides the host's: an explicit list, every other write is the host's. */
const PLAYER_WRITES = new Set([
  'POST /v1/adventures/:id/actions',
  'POST /v1/adventures/:id/rounds/current/pass',
  'DELETE /v1/adventures/:id/rounds/current/submission',
]);
/** Any member's own membership (their character, leaving): `:userId` must be the caller. */
const OWN_MEMBERSHIP = new Set([
  'PATCH /v1/adventures/:id/members/:userId',
  'DELETE /v1/adventures/:id/members/:userId',
]);
/** Reads that are the host's alone: the invite codes are the room's keys. */
const HOST_READS = new Set(['GET /v1/adventures/:id/invites', 'HEAD /v1/adventures/:id/invites']);

/** The routes that give their caller a new adventure, held to LIMITS.adventuresPerUser. */
const CREATES_ADVENTURE = new Set(['POST /v1/adventures', 'POST /v1/adventures/import']);

type AdmittedRequest = Request & { chronicleAdmin?: boolean };

@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AppConfig,
    private readonly reflector: Reflector,
    private readonly accounts: AccountsRepository,
    private readonly owners: AdventureOwners,
    private readonly budget: DailyTokenBudget,
    private readonly limiter: RateLimiter,
  ) {}

  /** Express middleware, mounted before every route and static file (see configureHttp). */
  readonly admit = (req: Request, res: Response, next: NextFunction): void => {
    if (isOpenRequest(req.method, req.url)) return next();
    this.identify(req).then(
      () => next(),
      (error: unknown) => {
        const answer = answerFor(error);
        if (!answer) return next(error);
        if (answer.retryAfterSeconds !== undefined) {
          res.setHeader('Retry-After', String(Math.max(1, Math.ceil(answer.retryAfterSeconds))));
        }
        res.status(answer.status).json(errorBody(answer.status, answer.message));
      },
    );
  };

  /** Who is asking: the admin (for any spelling of /v1/admin) or a user with a current key. */
  private async identify(req: AdmittedRequest): Promise<void> {
    const token = bearerToken(req);
    if (isAdminPath(req.url)) {
      const admin = this.config.adminApiKey;
      if (admin !== undefined && token !== null && keysEqual(token, admin)) {
        req.chronicleAdmin = true;
        return;
      }
      await this.countAnonymous(req);
      throw new UnauthorizedError(
        admin === undefined
          ? 'admin routes are closed on this installation: set ADMIN_API_KEY and send it as "Authorization: Bearer <ADMIN_API_KEY>"'
          : 'admin routes need the admin key: send "Authorization: Bearer <ADMIN_API_KEY>"',
      );
    }
    const authenticated = token === null ? null : await this.accounts.authenticate(token);
    if (!authenticated) {
      await this.countAnonymous(req);
      throw new UnauthorizedError(
        token === null
          ? 'an API key is required: send "Authorization: Bearer <your API key>" (npm start prints a development key; an admin creates keys with POST /v1/admin/users/:id/keys)'
          : 'this API key is unknown or revoked: send "Authorization: Bearer <your API key>" with a current key',
      );
    }
    attachRequestUser(req, {
      id: authenticated.user.id,
      name: authenticated.user.name,
      keyId: authenticated.keyId,
      dailyTokenBudget: authenticated.user.dailyTokenBudget,
    });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<AdmittedRequest>();
    if (isOpenRequest(req.method, req.url)) return true;
    const route: string = (req.route as { path?: string } | undefined)?.path ?? req.path;

    if (isAdminRoute(route)) {
      if (req.chronicleAdmin === true) return true;
      throw new UnauthorizedError('admin routes need the admin key');
    }
    const user = requestUserOf(req);
    // `admit` did not authenticate this request (it is not mounted, or the route is an admin
    // one it read otherwise): nothing is served without a key.
    if (!user) throw new UnauthorizedError('an API key is required');

    const startsTurn =
      this.reflector.getAllAndOverride<boolean>(STARTS_TURN, [
        context.getHandler(),
        context.getClass(),
      ]) === true;
    // Asked side by side (each is a round trip to Redis or, on a cache miss, Postgres), then
    // answered in this order: the rate limit, the ownership, the daily budget.
    const access = this.assertMayUseAdventureIn(req, route, user);
    const checks = await Promise.allSettled([
      startsTurn
        ? this.count('turns', user.keyId, this.config.rateLimitTurnsPerMinute, 'turns')
        : READS.has(req.method)
          ? this.count('reads', user.keyId, this.config.rateLimitReadsPerMinute, 'reads')
          : this.count('writes', user.keyId, this.config.rateLimitWritesPerMinute, 'writes'),
      access,
      startsTurn ? this.assertPayerHasBudget(req, route, user, access) : undefined,
    ]);
    for (const check of checks) if (check.status === 'rejected') throw check.reason;

    if (CREATES_ADVENTURE.has(`${req.method} ${route}`)) {
      // Checked before the create, so two creates racing at 99 may both pass: the cap bounds
      // storage per user, and one over it is harmless.
      if ((await this.owners.countOwnedBy(user.id)) >= LIMITS.adventuresPerUser) {
        throw new LimitExceededError(
          `a user owns at most ${LIMITS.adventuresPerUser} adventures (limit adventuresPerUser); delete one first`,
        );
      }
    }
    return true;
  }

  // Whatever the route names its parameter, a path under /v1/adventures/:param is that
  // adventure's: fail closed rather than trust every controller to call it `id`.
  /** The caller's role in the adventure the path names; null when the path names none. */
  private async assertMayUseAdventureIn(
    req: Request,
    route: string,
    user: RequestUser,
  ): Promise<RoomRole | null> {
    const adventureParam = ADVENTURE_ROUTE.exec(route)?.[1];
    if (adventureParam === undefined) return null;
    const adventureId = String(req.params[adventureParam]);
    if (!isUuid(adventureId)) {
      throw new InvalidCommandError(
        `path parameter ${adventureParam} must be a UUID (an adventure id); got "${adventureId.slice(0, 40)}"`,
      );
    }
    const role = await this.owners.roleOf(adventureId, user.id);
    if (role === null) throw new NotFoundError(`adventure ${adventureId} not found`);
    const asked = `${req.method} ${route.replace(ADVENTURE_ROUTE, '/v1/adventures/:id/').replace(/\/$/, '')}`;
    if (!roleAllows(role, asked, req.params.userId === user.id, req.method)) {
      throw new ForbiddenError(
        role === 'spectator'
          ? 'you are a spectator in this room: a spectator may only read; ask the host to make you a player'
          : 'you are a player in this room: only the host may do this',
      );
    }
    // Every log line of the request names the adventure (and the turn a turn route names), as
    // the worker's lines do: the ids that join them. Added once it is the caller's.
    const context = currentLogContext();
    context.adventureId = adventureId;
    const turnId = req.params.turnId;
    if (typeof turnId === 'string' && isUuid(turnId)) context.turnId = turnId;
    return role;
  }

  /**
   * The daily model budget of whoever pays for the turn: the caller's own, but in an adventure
   * its owner's (spec/multiplayer.md §3.5, a room's host pays; model_calls.user_id is the owner).
   * A player's own budget pays nothing here; their share is held by perPlayerDailyTokens.
   */
  private async assertPayerHasBudget(
    req: Request,
    route: string,
    user: RequestUser,
    access: Promise<RoomRole | null>,
  ) {
    // Asked at once, beside the rate limit, as before rooms: the caller pays unless they are a
    // room's player. Started after the role is known, the budget's Redis read missed the rate
    // limit's and a stalled Redis answered in 4 s instead of 3 (dependencies.int-spec).
    const callerCheck = this.budget
      .assertAvailable(user.id, user.dailyTokenBudget ?? this.config.dailyTokenBudget, new Date())
      .then(
        () => null,
        (error: unknown) => error,
      );
    const role = await access.catch(() => null);
    const adventureParam = ADVENTURE_ROUTE.exec(route)?.[1];
    const adventureId = adventureParam === undefined ? '' : String(req.params[adventureParam]);
    // The host is the owner: only another member's turn asks who the owner is.
    const ownerId =
      role !== null && role !== 'host' && isUuid(adventureId)
        ? await this.owners.ownerOf(adventureId)
        : null;
    if (ownerId === null || ownerId === user.id) {
      const refused = await callerCheck;
      if (refused) throw refused;
      return;
    }
    const owner = await this.accounts.getUser(ownerId);
    await this.budget.assertAvailable(
      ownerId,
      owner?.dailyTokenBudget ?? this.config.dailyTokenBudget,
      new Date(),
    );
  }

  private async count(bucket: string, subject: string, limit: number, what: string) {
    const window = this.config.rateLimitWindowSeconds;
    const result = await this.limiter.hit(bucket, subject, limit, window);
    if (!result.allowed) {
      throw new RateLimitedError(
        `rate limit reached: ${limit} ${what} per ${window} s for this ${bucket === 'anonymous' ? 'address' : 'API key'}; try again in ${result.retryAfterSeconds} s`,
        result.retryAfterSeconds,
      );
    }
  }

  /**
   * Requests without a valid key, per client address (behind a proxy, TRUST_PROXY decides
   * which address that is): bounds key guessing and anonymous load.
   */
  private countAnonymous(req: Request) {
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    return this.count(
      'anonymous',
      address,
      this.config.rateLimitAnonPerMinute,
      'requests without a valid key',
    );
  }
}

/** Whether a member in `role` may make the request `asked` ("METHOD /v1/adventures/:id/…"). */
function roleAllows(
  role: RoomRole,
  asked: string,
  ownMembership: boolean,
  method: string,
): boolean {
  if (role === 'host') return true;
  if (OWN_MEMBERSHIP.has(asked)) return ownMembership;
  if (READS.has(method)) return !HOST_READS.has(asked);
  return role === 'player' && PLAYER_WRITES.has(asked);
}

function bearerToken(req: Request): string | null {
  const header = req.header('authorization');
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}
