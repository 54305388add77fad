/**
 * Whether one JSON Schema `pattern` accepts every string another accepts, decided on finite automata (refa), not
 * by sampling: the versioning policy lets a request's pattern grow and a response's shrink, never the other way.
 */
import { CharSet, type Concatenation, DFA, type Element, type Expression, JS, NFA, type NoParent } from 'refa';

/** `^` and `$` as refa reads them: a lookaround that no character may satisfy (`(?<![^])`, `(?![^])`). */
function isInputEdge(element: NoParent<Element> | undefined, kind: 'ahead' | 'behind'): boolean {
  if (element?.type !== 'Assertion' || element.kind !== kind || !element.negate) {
    return false;
  }
  const [only, ...others] = element.alternatives;
  const [character, ...rest] = only?.elements ?? [];
  return others.length === 0 && rest.length === 0 && character?.type === 'CharacterClass' && character.characters.isAll;
}

/** Any string: `[^]*`. */
function anyString(maxCharacter: number): NoParent<Element> {
  const anything: NoParent<Concatenation> = {
    type: 'Concatenation',
    elements: [{ type: 'CharacterClass', characters: CharSet.all(maxCharacter) }],
  };
  return { type: 'Quantifier', lazy: false, min: 0, max: Number.POSITIVE_INFINITY, alternatives: [anything] };
}

/**
 * The strings `pattern` accepts as JSON Schema reads it (`new RegExp(pattern, 'u').test(string)`: a match anywhere),
 * as a DFA. An alternative anchored by `^` or `$` keeps its anchors' meaning; one that is not may be preceded or
 * followed by anything. Undefined when the pattern holds what the automaton cannot express exactly (a lookaround,
 * a word boundary, an anchor inside a group, a backreference refa cannot resolve).
 */
function languageOf(pattern: string): DFA | undefined {
  try {
    const { expression, maxCharacter } = JS.Parser.fromLiteral({ source: pattern, flags: 'u' }).parse();
    const whole: NoParent<Expression> = {
      type: 'Expression',
      alternatives: expression.alternatives.map(({ elements }) => {
        const anchoredStart = isInputEdge(elements[0], 'behind');
        const anchoredEnd = isInputEdge(elements.at(-1), 'ahead');
        const middle = elements.slice(anchoredStart ? 1 : 0, anchoredEnd ? -1 : undefined);
        return {
          type: 'Concatenation',
          elements: [
            ...(anchoredStart ? [] : [anyString(maxCharacter)]),
            ...middle,
            ...(anchoredEnd ? [] : [anyString(maxCharacter)]),
          ],
        };
      }),
    };
    // An assertion left is one whose meaning the automaton would lose: building it throws.
    return DFA.fromFA(NFA.fromRegex(whole, { maxCharacter }, { assertions: 'throw' }));
  } catch {
    return undefined;
  }
}

/**
 * Whether every string `narrower` accepts is accepted by `wider` too (both JSON Schema patterns), proven on their
 * automata: the strings of the first that are not of the second are none. False when either cannot be decided.
 */
export function patternAcceptsAll(wider: string, narrower: string): boolean {
  const [outer, inner] = [languageOf(wider), languageOf(narrower)];
  if (!outer || !inner) {
    return false;
  }
  outer.complement();
  return DFA.fromIntersection(inner, outer).isEmpty;
}
