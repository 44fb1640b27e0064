import {
  Channel,
  connectivityState as ConnectivityState,
  type ChannelCredentials,
  type ChannelInterface,
  type ChannelOptions,
  type Deadline,
} from '@grpc/grpc-js';

type ServerSurfaceCall = Parameters<ChannelInterface['createCall']>[3];

/**
 * How long a channel may stay CONNECTING before that attempt is abandoned and a fresh one made.
 * grpc-js puts no limit on a connection attempt: a TCP connect whose SYN met a blackhole is
 * retried only by the kernel (1, 2, 4, 8, 16, 32 s apart), and a peer that accepts but never
 * answers the HTTP/2 handshake holds the attempt forever. A healthy connect, even to a peer on
 * a starved machine, takes milliseconds.
 */
export const GRPC_CONNECT_TIMEOUT_MS = 4_000;

/**
 * A grpc-js channel with a connect watchdog: behind it, one real channel; when that channel has
 * been CONNECTING longer than `connectTimeoutMs` (no address ready, the attempt unanswered),
 * it is closed (calls waiting for a connection fail UNAVAILABLE, never sent) and a new one
 * connects at once to the same target. Calls go straight to the current channel (one property
 * read on the call path); the watchdog lives on connectivity-state callbacks and one timer.
 */
export class WatchdogChannel implements ChannelInterface {
  private channel: Channel;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Channels replaced so far (for tests and logs). */
  replaced = 0;

  constructor(
    private readonly target: string,
    private readonly credentials: ChannelCredentials,
    private readonly options: ChannelOptions,
    private readonly connectTimeoutMs: number = GRPC_CONNECT_TIMEOUT_MS,
  ) {
    this.channel = new Channel(target, credentials, options);
    this.watch(this.channel);
  }

  /** Follows `channel`'s state while it is the current one; arms the timer while CONNECTING. */
  private watch(channel: Channel): void {
    if (this.closed || channel !== this.channel) return;
    const state = channel.getConnectivityState(false);
    clearTimeout(this.timer);
    this.timer = undefined;
    if (state === ConnectivityState.CONNECTING) {
      this.timer = setTimeout(() => this.replace(channel), this.connectTimeoutMs);
      this.timer.unref();
    }
    // No deadline: no timer of grpc-js's own; called back on the next change of state.
    channel.watchConnectivityState(state, Infinity, () => this.watch(channel));
  }

  private replace(stuck: Channel): void {
    if (this.closed || stuck !== this.channel) return;
    if (stuck.getConnectivityState(false) !== ConnectivityState.CONNECTING) return;
    this.replaced += 1;
    // A channel of its own subchannels: from the shared pool, the new channel would be handed
    // the very subchannel still waiting on the abandoned connect.
    this.channel = new Channel(this.target, this.credentials, {
      ...this.options,
      'grpc.use_local_subchannel_pool': 1,
    });
    stuck.close();
    this.watch(this.channel);
    // Connect now: calls queued meanwhile would do so too, but an idle client would not.
    this.channel.getConnectivityState(true);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.channel.close();
  }

  getTarget(): string {
    return this.channel.getTarget();
  }

  getConnectivityState(tryToConnect: boolean) {
    return this.channel.getConnectivityState(tryToConnect);
  }

  watchConnectivityState(
    currentState: Parameters<ChannelInterface['watchConnectivityState']>[0],
    deadline: Date | number,
    callback: (error?: Error) => void,
  ): void {
    this.channel.watchConnectivityState(currentState, deadline, callback);
  }

  getChannelzRef() {
    return this.channel.getChannelzRef();
  }

  createCall(
    method: string,
    deadline: Deadline,
    host: string | null | undefined,
    parentCall: ServerSurfaceCall | null,
    propagateFlags: number | null | undefined,
  ) {
    return this.channel.createCall(method, deadline, host, parentCall, propagateFlags);
  }
}
