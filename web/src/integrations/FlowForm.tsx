import { useState } from 'preact/hooks';
import type { DataSchemaField } from '@smarthome/protocol/config-flow';

/** What a step's field is called on the page: `update_interval` → "Update interval". */
export const labelOf = (name: string): string => {
  const words = name.replace(/_/g, ' ').trim();
  return words ? words[0].toUpperCase() + words.slice(1) : name;
};

/** The engine's error codes in words; the code itself is kept (the API's words), unknown codes shown as they are. */
export function errorText(code: string, field?: DataSchemaField): string {
  const range =
    field?.min !== undefined && field.max !== undefined
      ? `between ${field.min} and ${field.max}`
      : field?.min !== undefined
        ? `at least ${field.min}`
        : field?.max !== undefined
          ? `at most ${field.max}`
          : 'in range';
  const words: Record<string, string> = {
    required: 'Required',
    invalid_integer: 'Enter a whole number',
    invalid_number: 'Enter a number',
    invalid_boolean: 'Choose yes or no',
    invalid_option: 'Choose one of the options',
    invalid_url: 'Enter an http or https address',
    invalid_string: 'Enter text',
    too_long: 'Too long',
    out_of_range: `Enter a number ${range}`,
    cannot_connect: 'Cannot connect',
    invalid_auth: 'The credentials were refused',
  };
  return words[code] ? `${words[code]} (${code}).` : code;
}

type Values = Record<string, string | boolean>;

function initial(schema: DataSchemaField[]): Values {
  const out: Values = {};
  for (const f of schema)
    out[f.name] = f.type === 'boolean' ? f.default === true : f.default === undefined ? '' : String(f.default);
  return out;
}

/** What the form sends: text as typed (the engine coerces and applies defaults to blanks), booleans as booleans. */
function inputOf(schema: DataSchemaField[], values: Values): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of schema) {
    const v = values[f.name];
    if (typeof v === 'boolean' || v !== '') out[f.name] = v;
  }
  return out;
}

function Control(props: {
  field: DataSchemaField;
  id: string;
  value: string | boolean;
  set: (v: string | boolean) => void;
  describedBy: string | undefined;
  invalid: boolean;
}) {
  const { field: f, id } = props;
  const common = {
    id,
    name: f.name,
    'aria-describedby': props.describedBy,
    'aria-invalid': props.invalid ? ('true' as const) : undefined,
    required: f.required === true,
  };
  const text = (e: Event) => props.set((e.currentTarget as HTMLInputElement).value);
  switch (f.type) {
    case 'boolean':
      return (
        <input
          {...common}
          required={false}
          type="checkbox"
          checked={props.value === true}
          onChange={(e) => props.set((e.currentTarget as HTMLInputElement).checked)}
        />
      );
    case 'select':
      return (
        <select {...common} value={String(props.value)} onChange={text}>
          {(!f.required || props.value === '') && <option value="">—</option>}
          {(f.options ?? []).map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      );
    case 'integer':
    case 'float':
      return (
        <input
          {...common}
          type="number"
          inputMode={f.type === 'integer' ? 'numeric' : 'decimal'}
          step={f.type === 'integer' ? 1 : 'any'}
          min={f.min}
          max={f.max}
          value={String(props.value)}
          onInput={text}
        />
      );
    default:
      return (
        <input
          {...common}
          type={f.type === 'password' ? 'password' : f.type === 'url' ? 'url' : 'text'}
          autocomplete={f.type === 'password' ? 'new-password' : 'off'}
          value={String(props.value)}
          onInput={text}
        />
      );
  }
}

/**
 * One form step rendered from its data_schema: a labelled control per field (required ones
 * marked), its description and its error from the step's `errors`; `base` errors above.
 * The browser's own validation is off so the API's checks and words are the ones shown.
 */
export function FlowForm(props: {
  flowId: string;
  schema: DataSchemaField[];
  errors: Record<string, string>;
  busy: boolean;
  submitLabel: string;
  onSubmit: (input: Record<string, unknown>) => void;
}) {
  const [values, setValues] = useState<Values>(() => initial(props.schema));
  const { errors } = props;
  const unplaced = Object.entries(errors).filter(([k]) => !props.schema.some((f) => f.name === k));
  const submit = (e: Event) => {
    e.preventDefault();
    props.onSubmit(inputOf(props.schema, values));
  };
  return (
    <form class="flow-form" noValidate onSubmit={submit}>
      {unplaced.length > 0 && (
        <div class="error" role="alert">
          {unplaced.map(([k, code]) => (
            <p key={k}>{k === 'base' ? errorText(code) : `${labelOf(k)}: ${errorText(code)}`}</p>
          ))}
        </div>
      )}
      {props.schema.map((f) => {
        const id = `flow-${props.flowId}-${f.name}`;
        const error = errors[f.name];
        const describedBy =
          [f.description ? `${id}-desc` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
        return (
          <div key={f.name} class={`flow-field ${f.type === 'boolean' ? 'check' : ''}`} data-field={f.name}>
            <label for={id}>
              {labelOf(f.name)}
              {f.required && (
                <span class="required" aria-hidden="true">
                  {' '}
                  *
                </span>
              )}
            </label>
            <Control
              field={f}
              id={id}
              value={values[f.name]}
              set={(v) => setValues({ ...values, [f.name]: v })}
              describedBy={describedBy}
              invalid={!!error}
            />
            {f.description && (
              <p class="note" id={`${id}-desc`}>
                {f.description}
              </p>
            )}
            {error && (
              <p class="error field-error" id={`${id}-error`}>
                {errorText(error, f)}
              </p>
            )}
          </div>
        );
      })}
      {props.schema.some((f) => f.required) && (
        <p class="note">
          <span aria-hidden="true">*</span> required
        </p>
      )}
      <button type="submit" disabled={props.busy}>
        {props.submitLabel}
      </button>
    </form>
  );
}
