// A playbook version's declared inputs as form fields (strings as text, the other types as JSON),
// shared by running a playbook, an alert rule that runs one and a job that starts one.

export interface DeclaredInput {
  name: string;
  type: string;
  required?: boolean;
  description?: string;
}

/** A field's text as the input's value: text for strings, JSON for the other types. */
export function inputValue(input: DeclaredInput, text: string): unknown {
  if (input.type === 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${input.name} must be ${input.type === 'integer' ? 'an integer' : `a ${input.type}`} (JSON)`);
  }
}

/** The filled-in fields as the inputs object the API takes (empty fields left out). */
export function inputsOf(declared: DeclaredInput[], values: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(
    declared.filter((i) => values[i.name] !== undefined && values[i.name] !== '').map((i) => [i.name, inputValue(i, values[i.name])]),
  );
}

/** Stored inputs as the fields' texts (for changing them). */
export function inputTexts(inputs: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

export function InputFields({
  declared,
  values,
  onChange,
  optional = false,
}: {
  declared: DeclaredInput[];
  values: Record<string, string>;
  onChange: (values: Record<string, string>) => void;
  /** Every field may stay empty (an alert's fields fill the inputs of their names). */
  optional?: boolean;
}) {
  return (
    <>
      {declared.map((i) => (
        <label key={i.name}>
          {i.name} ({i.type}
          {i.required ? ', required' : ''})
          <input
            required={i.required && !optional}
            value={values[i.name] ?? ''}
            onInput={(e) => onChange({ ...values, [i.name]: e.currentTarget.value })}
          />
          {i.description && <span class="meta">{i.description}</span>}
        </label>
      ))}
    </>
  );
}
