/** Single values of the sandbox as a whole. */
export interface Meta {
  /** The seed the data was made with (kept, so numbers stay unique without --seed). */
  seed: string;
  /** The token made for the default client when none is configured. */
  default_token: string;
  /** The key of the tags in POD photo names (see PodPhotos): random, made once, never shown. */
  pod_secret: string;
  /**
   * Where the sandbox's manual clock stands: the time of sandbox-wide work, and of every
   * client that has no clock of its own yet (so the one clock of an older data file
   * becomes each client's clock).
   */
  manual_clock_ms: number;
  /** Set once the due times of an older data file were turned into jobs. */
  jobs_migrated: number;
  /**
   * On a shared database: a keyed digest of the clients of the replica that started last,
   * and when it started (see compareClients). Older versions kept an unkeyed one under
   * `clients_config`, which they alone read: neither version's row makes the other warn.
   */
  /** `host`: the hostname of the replica that wrote it (absent from replicas of versions before it). */
  clients_hmac: { hmac: string; at: string; host?: string };
  /** On a shared database: the `--clock` of the replica that started last, and when it started (see compareClockMode). */
  clock_mode: { mode: 'real' | 'manual'; at: string };
  /**
   * The sandbox's real clock on a data file: its base and pace, and (while it runs at
   * another pace than wall time's) the wall time up to which it is known to have run, so
   * a restart, even after a crash, never puts it behind what it showed (see loadClocks).
   */
  real_clock: { sim_base_ms: number; wall_base_ms: number; speed: number; previous_speed: number; kept_until_wall_ms?: number };
  /** How many steps each scenario had at the last start, by name (see scenarioChanges): a removed or shortened one is told at the next start. */
  scenario_steps: Record<string, number>;
}
