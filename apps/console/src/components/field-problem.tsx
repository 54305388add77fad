/** What is wrong with a field's value, under the field, which names this `id` in its `aria-describedby`; or nothing. */
export function FieldProblem({ id, problem }: { id: string; problem: string | null | undefined }) {
  if (problem === null || problem === undefined) {
    return null;
  }
  return (
    <p id={id} className="field-error">
      {problem}
    </p>
  );
}
