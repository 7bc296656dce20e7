import type { WordsOf } from '../../ui/i18n.js'
import type { users as en } from '../en/users.js'

export const users: WordsOf<typeof en> = {
  'users.new': 'Novo usuário',
  'users.email': 'E-mail',
  'users.username': 'Nome de usuário',
  'users.initialPassword': 'Senha inicial',
  'users.create': 'Criar',
  'users.deleted': 'Usuário {name} excluído.',
  'users.search': 'Buscar usuários',
  'users.status': 'Situação',
  'users.any': 'Qualquer',
  'users.searchButton': 'Buscar',
  'users.createUser': 'Criar usuário',
  'users.what': 'os usuários',
  'users.noMatch': 'Nenhum usuário corresponde a esta busca.',
  'users.none': 'Nenhum usuário ainda.',
  'users.count': { one: '{count} usuário', other: '{count} usuários' },
  'users.lastLogin': 'Último login',
  'status.ACTIVE': 'Ativo',
  'status.INACTIVE': 'Inativo',
  'status.SUSPENDED': 'Suspenso',
}
