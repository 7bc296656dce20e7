import type { WordsOf } from '../../ui/i18n.js'
import type { kitEn } from '../../ui/words.js'

export const kit: WordsOf<typeof kitEn> = {
  'kit.sure': 'Tem certeza?',
  'kit.cancel': 'Cancelar',
  'kit.copy': 'Copiar',
  'kit.copied': 'Copiado.',
  'kit.copyFailed': 'Não foi possível copiar: selecione o texto e copie à mão.',
  'kit.pages': 'Páginas',
  'kit.previous': 'Página anterior',
  'kit.next': 'Próxima página',
  'kit.range': '{first}–{last} de {total}',
  'kit.valueOf': 'O valor de “{name}”',
  'kit.storeNow': 'Guarde-o agora: ele só é mostrado esta vez.',
  'kit.keyValue': 'Valor da chave',
  'kit.stored': 'Já guardei',
  'kit.notAllowed': 'Não permitido: ',
  'kit.support': 'Para o suporte:',
  'kit.requestId': ', id da requisição {id}',
  'kit.wrong': 'Algo deu errado.',
  'kit.unreachable': 'Não foi possível acessar o serviço.',
  'kit.loading': 'Carregando {what}…',
}
