// wink-porter2-stemmer ships no types: one default export, the Porter2 (Snowball English) stemmer.
declare module 'wink-porter2-stemmer' {
  export default function stem(word: string): string;
}
