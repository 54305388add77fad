import proxyAddr from 'proxy-addr';

/**
 * Whose `X-Forwarded-For` the server believes when it takes a request's client address (`req.ip`), as Express's
 * `trust proxy` setting: a number of proxy hops nearest the server, or the proxies' addresses and subnets. 0 believes
 * no one: the client is the connection's peer.
 */
export type TrustProxy = number | readonly string[];

/** The most hops TRUST_PROXY may count: far more than any real chain of proxies. */
const MAX_HOPS = 100;
/** The names proxy-addr (Express) accepts for its predefined ranges. */
const RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * Parses TRUST_PROXY: a hop count (`1`), or a comma-separated list of IP addresses, subnets (`10.0.0.0/8`) and
 * proxy-addr's range names (`loopback`). Every entry is checked by proxy-addr, which Express compiles the setting
 * with, so a value accepted here is one Express accepts. Throws an Error naming the entry at fault.
 */
export function parseTrustProxy(text: string): TrustProxy {
  const value = text.trim();
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > MAX_HOPS) {
      throw new Error(`${value} hops is more than ${MAX_HOPS}`);
    }
    return hops;
  }
  if (value === 'true') {
    // Express would accept it and believe every client's X-Forwarded-For: any client could pick its own address.
    throw new Error('"true" would trust every client to name its own address; list the proxies instead');
  }
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (entry === '') {
      throw new Error('the list has an empty entry');
    }
    try {
      proxyAddr.compile(entry);
    } catch {
      throw new Error(
        `${JSON.stringify(entry)} is not an IP address, a subnet (address/prefix) or one of ${RANGE_NAMES.join(', ')}`,
      );
    }
  }
  return entries;
}
