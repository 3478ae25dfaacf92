/** A labelled, required text input bound to a string state: the forms' one field shape. */
export function Field(props: {
  label: string;
  name: string;
  value: string;
  set: (v: string) => void;
  type?: string;
  auto?: string;
}) {
  return (
    <label>
      {props.label}
      <input
        name={props.name}
        type={props.type ?? 'text'}
        autocomplete={props.auto ?? 'off'}
        required
        value={props.value}
        onInput={(e) => props.set((e.currentTarget as HTMLInputElement).value)}
      />
    </label>
  );
}
