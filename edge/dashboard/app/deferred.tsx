// A part of a screen whose code loads on demand without holding the screen back: preact-iso's
// `lazy` suspends the whole route until its chunk arrives, which suits an area but not a part
// below the first screen; this renders nothing until the chunk is in, then the part.
import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export function deferred<P extends object>(load: () => Promise<FunctionComponent<P>>): FunctionComponent<P> {
  let loaded: FunctionComponent<P> | undefined;
  let loading: Promise<FunctionComponent<P>> | undefined;
  return function Deferred(props: P) {
    const [part, setPart] = useState(() => loaded);
    useEffect(() => {
      if (part) return;
      loading ??= load().then((c) => (loaded = c));
      let live = true;
      void loading.then((c) => live && setPart(() => c));
      return () => {
        live = false;
      };
    }, [part]);
    const Part = part;
    return Part ? <Part {...props} /> : null;
  };
}
