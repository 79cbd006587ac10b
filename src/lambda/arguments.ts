/**
 * The sweeper handler's arguments, checked before anything is read or deleted:
 * a misspelt event mode once fell back to 'start', a full sweep, where 'continue' only resumes one.
 * The checkers are the public API's (src/util/validate.ts).
 */
import { checkFunction, checkNumber, checkOneOf, checkOptions, ifGiven, invalidArgument } from '../util/validate.js';

const HANDLER_OPTION_KEYS = ['env', 'log', 'now', 'checkpointIntervalMs', 'pageSize', 'checkpointEvery'] as const;

export function checkSweeperHandlerOptions(value: unknown): void {
  const options = checkOptions('createSweeperHandler options', value, HANDLER_OPTION_KEYS, { code: 'CONFIG' });
  ifGiven(options['env'], (env) => {
    if (typeof env !== 'object' || env === null || Array.isArray(env))
      throw invalidArgument('createSweeperHandler: env', 'an environment object', env, 'CONFIG');
  });
  ifGiven(options['log'], (f) => checkFunction('createSweeperHandler: log', f, { code: 'CONFIG' }));
  ifGiven(options['now'], (f) => checkFunction('createSweeperHandler: now', f, { code: 'CONFIG' }));
  ifGiven(options['checkpointIntervalMs'], (n) =>
    checkNumber('createSweeperHandler: checkpointIntervalMs', n, { min: 0, code: 'CONFIG' }),
  );
  for (const name of ['pageSize', 'checkpointEvery'] as const)
    ifGiven(options[name], (n) =>
      checkNumber(`createSweeperHandler: ${name}`, n, { integer: true, min: 1, code: 'CONFIG' }),
    );
}

/**
 * The event: none (a plain invocation: 'start'), or an object whose `mode`, when present, is
 * 'start' or 'continue'. Other members are left alone (an EventBridge event carries its own).
 */
export function sweeperModeOf(event: unknown): 'start' | 'continue' {
  if (event === undefined || event === null) return 'start';
  if (typeof event !== 'object' || Array.isArray(event))
    throw invalidArgument('the sweeper event', 'an object', event, 'CONFIG');
  const mode = (event as { mode?: unknown }).mode;
  return mode === undefined
    ? 'start'
    : checkOneOf('the sweeper event mode', mode, ['start', 'continue'], { code: 'CONFIG' });
}
